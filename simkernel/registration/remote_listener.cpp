#include "registration/remote_listener.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "s4bxi/host_port.hpp"
#include "s4bxi/remote_wire.hpp"

namespace s4bxi::sim {

namespace {

std::string describe(const sockaddr* address, socklen_t length)
{
    std::string text = remote::describe_address(address, length);
    return text.empty() ? "an unknown address" : text;
}

// Reads exactly `size` bytes before `deadline`; false on a timeout, an error or an early end.
bool read_fully(int fd, void* into, size_t size, std::chrono::steady_clock::time_point deadline)
{
    auto* bytes = static_cast<char*>(into);
    while (size > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
        ssize_t got = read(fd, bytes, size);
        if (got <= 0) return false;
        bytes += got;
        size -= static_cast<size_t>(got);
    }
    return true;
}

void warn(const std::string& message)
{
    fmt::print(stderr, "s4bxi-simkernel: warning: {}\n", message);
}

}  // namespace

RemoteListener::RemoteListener(const std::string& address, std::string secret, Accepted accepted)
    : secret_(std::move(secret)), accepted_(std::move(accepted))
{
    if (!remote::secret_well_formed(secret_))
        throw std::runtime_error(fmt::format("--listen {}: the run's secret ({}) is missing or malformed", address,
                                             remote::kSecretVariable));
    remote::HostPort split = remote::split_host_port(address);
    if (!split.problem.empty()) throw std::runtime_error(fmt::format("--listen {}: {}", address, split.problem));
    const std::string& host = split.host;
    const std::string& port = split.port;
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0)
        throw std::runtime_error(fmt::format("--listen {}: {}", address, gai_strerror(rc)));
    std::string why = "no address";
    for (addrinfo* a = found; a && socket_ < 0; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (a->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);  // that address only
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 64) != 0) {
            why = std::strerror(errno);
            close(fd);
            continue;
        }
        socket_ = fd;
    }
    freeaddrinfo(found);
    if (socket_ < 0) throw std::runtime_error(fmt::format("--listen {}: cannot listen there: {}", address, why));
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    getsockname(socket_, reinterpret_cast<sockaddr*>(&local), &length);
    bound_ = describe(reinterpret_cast<sockaddr*>(&local), length);
    if (pipe2(stop_, O_CLOEXEC) != 0) {
        close(socket_);
        throw std::runtime_error(fmt::format("--listen {}: cannot create a pipe: {}", address, std::strerror(errno)));
    }
    thread_ = std::thread([this] { serve(); });
}

RemoteListener::~RemoteListener()
{
    char stop = 1;
    (void)!write(stop_[1], &stop, 1);
    if (thread_.joinable()) thread_.join();
    close(socket_);
    close(stop_[0]);
    close(stop_[1]);
}

void RemoteListener::serve()
{
    while (true) {
        pollfd watched[2] = {{socket_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
        if (poll(watched, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (watched[1].revents) return;
        sockaddr_storage peer{};
        socklen_t length = sizeof peer;
        int connection = accept4(socket_, reinterpret_cast<sockaddr*>(&peer), &length, SOCK_CLOEXEC);
        if (connection < 0) continue;
        // One at a time: a peer that sends nothing holds the next ones for kGreetingSeconds
        // at most; a run has one agent per machine.
        std::string from = describe(reinterpret_cast<sockaddr*>(&peer), length), machine;
        if (greet(connection, from, machine)) accepted_(connection, machine, from);
        else close(connection);
    }
}

bool RemoteListener::greet(int connection, const std::string& peer, std::string& machine)
{
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<int>(remote::kGreetingSeconds * 1000));
    remote::FrameHeader header;
    if (!read_fully(connection, &header, sizeof header, deadline)) {
        warn(fmt::format("refused a connection from {}: no greeting (closed, or nothing within {} s)", peer,
                         remote::kGreetingSeconds));
        return false;
    }
    if (std::string problem = remote::header_problem(header); !problem.empty()) {
        warn(fmt::format("refused a connection from {}: {}", peer, problem));
        return false;
    }
    remote::Hello hello;
    if (!read_fully(connection, &hello, sizeof hello, deadline)) {
        warn(fmt::format("refused a connection from {}: its greeting ended early", peer));
        return false;
    }
    if (!remote::same_secret(secret_, hello.secret)) {
        warn(fmt::format("refused a connection from {}: not a process of this run (wrong secret)", peer));
        return false;
    }
    machine = remote::text_of(hello.machine);
    remote::FrameHeader reply;
    reply.kind = static_cast<uint16_t>(remote::Kind::Answer);
    reply.length = sizeof(remote::Answer);
    remote::Answer answer;
    answer.accepted = 1;
    int on = 1;
    setsockopt(connection, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // requests and replies are small and waited for
    return write(connection, &reply, sizeof reply) == sizeof reply && write(connection, &answer, sizeof answer) == sizeof answer;
}

}  // namespace s4bxi::sim
