#include "payload_peers.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "process_service.hpp"
#include "s4bxi/host_port.hpp"
#include "tcp_connect.hpp"

namespace s4bxi::agent {

PayloadPeers::PayloadPeers(const std::string& local_address, std::string secret) : secret_(std::move(secret))
{
    std::string host = local_address;
    if (!host.empty() && host.front() == '[') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), "0", &hints, &found) != 0 || !found)
        throw std::runtime_error("cannot listen for the other agents on " + host);
    listen_fd_ = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    bool bound = listen_fd_ >= 0 && bind(listen_fd_, found->ai_addr, found->ai_addrlen) == 0 && listen(listen_fd_, 64) == 0;
    freeaddrinfo(found);
    if (!bound) throw std::runtime_error("cannot listen for the other agents on " + host + ": " + std::strerror(errno));
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&local), &length);
    address_ = remote::describe_address(reinterpret_cast<sockaddr*>(&local), length);
    acceptor_ = std::thread([this] { accept_peers(); });
}

PayloadPeers::~PayloadPeers()
{
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    if (acceptor_.joinable()) acceptor_.join();
    close(listen_fd_);
    for (auto& [machine, stream] : peers_) {
        shutdown(stream->fd(), SHUT_RDWR);
        close(stream->fd());
    }
    for (std::thread& thread : served_) thread.detach();  // each ends with its connection
}

void PayloadPeers::accept_peers()
{
    while (!stop_) {
        pollfd watched{listen_fd_, POLLIN, 0};
        if (poll(&watched, 1, 200) <= 0) continue;
        int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        std::lock_guard<std::mutex> hold(mutex_);
        served_.emplace_back([this, fd] { serve_peer(fd); });
    }
}

// Another agent of the run: its greeting with the secret, then writes into this machine's
// processes, answered one by one.
void PayloadPeers::serve_peer(int fd)
{
    remote::FrameStream stream(fd);
    remote::FrameHeader header;
    std::vector<uint8_t> body, out;
    std::string problem;
    remote::Hello hello;
    size_t at = 0;
    if (stream.receive(header, body, problem) && header.kind == static_cast<uint16_t>(remote::Kind::Hello) &&
        remote::take(body, at, hello) && remote::same_secret(secret_, hello.secret)) {
        while (stream.receive(header, body, problem) && header.kind == static_cast<uint16_t>(remote::Kind::Call)) {
            remote::Call call;
            at = 0;
            if (!remote::take(body, at, call) || call.op != static_cast<uint32_t>(remote::CallOp::WriteMemory)) break;
            remote::Result result;
            out.clear();
            carry_out(call, body.data() + at, body.size() - at, result, out);
            if (!stream.send(remote::Kind::Result, {{&result, sizeof result}})) break;
        }
    }
    close(fd);
}

remote::FrameStream* PayloadPeers::peer(const std::string& machine)
{
    auto& stream = peers_[machine];
    if (stream) return stream.get();
    std::string why;
    int fd = connect_tcp(machine, why);
    if (fd < 0) {
        peers_.erase(machine);
        return nullptr;
    }
    stream = std::make_unique<remote::FrameStream>(fd);
    remote::Hello hello = remote::greeting(secret_);
    if (!stream->send(remote::Kind::Hello, {{&hello, sizeof hello}})) {
        close(fd);
        peers_.erase(machine);
        return nullptr;
    }
    return stream.get();
}

bool PayloadPeers::write_there(const std::string& machine, int32_t pid, uint64_t address, const uint8_t* bytes,
                               uint64_t length)
{
    std::lock_guard<std::mutex> hold(mutex_);  // one move at a time: the server waits for each
    remote::FrameStream* stream = peer(machine);
    if (!stream) return false;
    remote::Call call;
    call.op = static_cast<uint32_t>(remote::CallOp::WriteMemory);
    call.pid = pid;
    call.address = address;
    call.length = length;
    remote::FrameHeader header;
    std::vector<uint8_t> body;
    std::string problem;
    remote::Result result;
    size_t at = 0;
    if (stream->send(remote::Kind::Call, {{&call, sizeof call}, {bytes, length}}) &&
        stream->receive(header, body, problem) && header.kind == static_cast<uint16_t>(remote::Kind::Result) &&
        remote::take(body, at, result))
        return result.value == 1;
    close(stream->fd());  // the next move connects afresh
    peers_.erase(machine);
    return false;
}

}  // namespace s4bxi::agent
