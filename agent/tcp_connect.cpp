#include "tcp_connect.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "s4bxi/host_port.hpp"

namespace s4bxi::agent {

int connect_tcp(const std::string& address, std::string& why)
{
    remote::HostPort split = remote::split_host_port(address);
    if (!split.problem.empty()) {
        why = split.problem;
        return -1;
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(split.host.c_str(), split.port.c_str(), &hints, &found); rc != 0) {
        why = gai_strerror(rc);
        return -1;
    }
    int fd = -1;
    why = "no address";
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            why = std::strerror(errno);
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(found);
    if (fd < 0) return -1;
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return fd;
}

}  // namespace s4bxi::agent
