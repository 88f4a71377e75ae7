// A rank's first message on the run's registration socket (wire::Hello), as whoever serves
// that socket takes it: the server on its machine, an agent on another (docs/multi-host.md).
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>

#include "s4bxi/fd_passing.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::wire {

enum class HelloReceipt {
    Received,   // a hello, from the process it names, of this user
    Nothing,    // none within 5 s, or a short one: close the socket
    WrongPeer,  // the credentials do not match: refuse it
};

inline constexpr const char* kWrongPeerRefusal = "registration refused: peer credentials do not match";

inline HelloReceipt receive_hello(int fd, Hello& hello)
{
    pollfd pfd{fd, POLLIN, 0};
    if (poll(&pfd, 1, 5000) <= 0 || recv(fd, &hello, sizeof hello, 0) != sizeof hello) return HelloReceipt::Nothing;
    ucred peer{};
    socklen_t length = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0 || peer.uid != getuid() || peer.pid != hello.pid)
        return HelloReceipt::WrongPeer;
    return HelloReceipt::Received;
}

// Refuses a rank: a Welcome that says why, without channel, then the socket closed.
inline void refuse_rank(int fd, const char* reason)
{
    Welcome welcome{};
    welcome.status = 1;
    std::snprintf(welcome.reason, sizeof welcome.reason, "%s", reason);
    send_with_fds(fd, &welcome, sizeof welcome, nullptr, 0);
    close(fd);
}

}  // namespace s4bxi::wire
