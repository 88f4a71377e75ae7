// "HOST:PORT" addresses of the multi-host links (docs/multi-host.md): the server's --listen,
// the agents' connections to it and to each other.
#pragma once

#include <netdb.h>
#include <sys/socket.h>

#include <string>

namespace s4bxi::remote {

struct HostPort {
    std::string host;
    std::string port = "0";  // none given: any free port
    std::string problem;     // empty when the address is well formed
};

// "HOST:PORT", "[V6]:PORT", "HOST" or "[V6]".
inline HostPort split_host_port(const std::string& address)
{
    HostPort split;
    if (!address.empty() && address.front() == '[') {
        size_t close = address.find(']');
        if (close == std::string::npos) {
            split.problem = "no ']'";
            return split;
        }
        std::string rest = address.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') split.problem = "want [ADDRESS]:PORT";
        split.host = address.substr(1, close - 1);
        if (!rest.empty()) split.port = rest.substr(1);
        return split;
    }
    size_t colon = address.rfind(':');
    if (colon == std::string::npos) {
        split.host = address;
        return split;
    }
    if (address.find(':') != colon) split.problem = "an IPv6 address goes in brackets, [ADDRESS]:PORT";
    split.host = address.substr(0, colon);
    split.port = address.substr(colon + 1);
    return split;
}

// A socket address as "HOST:PORT" ("[V6]:PORT"), or "" when it cannot be told.
inline std::string describe_address(const sockaddr* address, socklen_t length)
{
    char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
    if (getnameinfo(address, length, host, sizeof host, port, sizeof port, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return "";
    return address->sa_family == AF_INET6 ? "[" + std::string(host) + "]:" + port : std::string(host) + ":" + port;
}

}  // namespace s4bxi::remote
