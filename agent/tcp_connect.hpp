// A TCP connection from this agent to "HOST:PORT" (the server, another agent), with Nagle's
// delay off: requests and replies are small and waited for.
#pragma once

#include <string>

namespace s4bxi::agent {

// The connected socket, or -1 with `why` saying what failed.
int connect_tcp(const std::string& address, std::string& why);

}  // namespace s4bxi::agent
