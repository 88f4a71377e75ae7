// The listener for the agents of other machines (--listen ADDR[:PORT], docs/multi-host.md):
// a thread of its own accepts TCP connections on the one address given, and checks each
// peer's greeting (s4bxi/remote_wire.hpp) against the run's secret. A peer without it is
// refused and logged, and nothing else happens; one that has it is accepted and handed to
// the server (MachineLink). Nothing here touches the simulation.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>

namespace s4bxi::sim {

class RemoteListener {
public:
    // Binds `address` (an IPv4 address, a bracketed IPv6 one, or a host name, with an
    // optional :PORT, 0 or none for any free port) and starts listening. Throws
    // std::runtime_error naming the address and what went wrong.
    // `accepted(fd, machine, peer)` takes an agent's connection past its greeting.
    using Accepted = std::function<void(int fd, const std::string& machine, const std::string& peer)>;
    RemoteListener(const std::string& address, std::string secret, Accepted accepted);
    ~RemoteListener();
    RemoteListener(const RemoteListener&) = delete;
    RemoteListener& operator=(const RemoteListener&) = delete;

    // What it is bound to, "ADDRESS:PORT".
    const std::string& bound() const { return bound_; }

private:
    void serve();
    bool greet(int connection, const std::string& peer, std::string& machine);

    int socket_ = -1;
    int stop_[2] = {-1, -1};  // a pipe: the thread's poll wakes when it is written
    std::string secret_;
    Accepted accepted_;
    std::string bound_;
    std::thread thread_;
};

}  // namespace s4bxi::sim
