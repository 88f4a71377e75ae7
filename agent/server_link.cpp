#include "server_link.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "local_ranks.hpp"
#include "payload_peers.hpp"
#include "process_service.hpp"
#include "tcp_connect.hpp"

namespace s4bxi::agent {

namespace {

}  // namespace

std::unique_ptr<remote::FrameStream> connect_to_server(const std::string& address, const std::string& secret)
{
    std::string why;
    int fd = connect_tcp(address, why);
    if (fd < 0) throw std::runtime_error("cannot reach the server at " + address + ": " + why);
    auto stream = std::make_unique<remote::FrameStream>(fd);
    remote::Hello hello = remote::greeting(secret);
    char machine[64] = {};
    gethostname(machine, sizeof machine - 1);
    remote::set_text(hello.machine, machine);
    hello.pid = static_cast<uint32_t>(getpid());
    if (!stream->send(remote::Kind::Hello, {{&hello, sizeof hello}}))
        throw std::runtime_error("the server at " + address + " closed the connection");
    remote::FrameHeader header;
    std::vector<uint8_t> body;
    std::string problem;
    remote::Answer answer;
    if (!stream->receive(header, body, problem) || header.kind != static_cast<uint16_t>(remote::Kind::Answer) ||
        body.size() != sizeof answer)
        throw std::runtime_error("the server at " + address + " refused this agent (wrong secret, or another run)");
    std::memcpy(&answer, body.data(), sizeof answer);
    if (!answer.accepted) throw std::runtime_error("the server refused this agent: " + remote::text_of(answer.message));
    return stream;
}

std::string local_address(const remote::FrameStream& server)
{
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    char host[NI_MAXHOST] = {};
    if (getsockname(server.fd(), reinterpret_cast<sockaddr*>(&local), &length) != 0 ||
        getnameinfo(reinterpret_cast<sockaddr*>(&local), length, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
        return "";
    return host;
}

namespace {

// A Move: this machine's bytes to a process here or on another machine, never through the
// server's machine.
void move(const remote::Call& call, const remote::MoveTarget& target, PayloadPeers& peers, remote::Result& result)
{
    result.id = call.id;
    remote::Call read = call;
    read.op = static_cast<uint32_t>(remote::CallOp::ReadMemory);
    std::vector<uint8_t> bytes, unused;
    remote::Result got;
    carry_out(read, nullptr, 0, got, bytes);
    if (!got.value) return;
    std::string machine = remote::text_of(target.machine);
    if (!machine.empty()) {
        result.value = peers.write_there(machine, target.pid, target.address, bytes.data(), bytes.size());
        return;
    }
    remote::Call write = call;
    write.op = static_cast<uint32_t>(remote::CallOp::WriteMemory);
    write.pid = target.pid;
    write.address = target.address;
    carry_out(write, bytes.data(), bytes.size(), result, unused);
}

}  // namespace

std::string serve_server(remote::FrameStream& server, LocalRanks& ranks, PayloadPeers& peers)
{
    remote::FrameHeader header;
    std::vector<uint8_t> body, out;
    std::string problem;
    remote::time_out_receives(server.fd());
    while (server.receive_or_beat(header, body, problem, "the server")) {
        size_t at = 0;
        switch (static_cast<remote::Kind>(header.kind)) {
        case remote::Kind::Beat: break;
        case remote::Kind::RankWelcome: {
            remote::RankHeader rank;
            wire::Welcome welcome;
            if (!remote::take(body, at, rank) || !remote::take(body, at, welcome)) return "a malformed welcome";
            ranks.welcomed(rank.rank, welcome);
            break;
        }
        case remote::Kind::Delta: {
            remote::RankHeader rank;
            if (!remote::take(body, at, rank)) return "a malformed delta";
            if (!ranks.apply(rank.rank, body.data() + at, body.size() - at))
                return "a delta for rank " + std::to_string(rank.rank) + " that does not apply";
            break;
        }
        case remote::Kind::Call: {
            remote::Call call;
            if (!remote::take(body, at, call)) return "a malformed call";
            remote::Result result;
            out.clear();
            remote::MoveTarget target;
            if (call.op == static_cast<uint32_t>(remote::CallOp::Move)) {
                if (!remote::take(body, at, target)) return "a malformed move";
                move(call, target, peers, result);
            } else {
                carry_out(call, body.data() + at, body.size() - at, result, out);
            }
            if (!server.send(remote::Kind::Result, {{&result, sizeof result}, {out.data(), out.size()}}))
                return "the server is gone";
            break;
        }
        case remote::Kind::Bye: return "";
        default: return "an unexpected frame of kind " + std::to_string(header.kind);
        }
    }
    return problem.empty() ? "the server closed the connection" : problem;
}

}  // namespace s4bxi::agent
