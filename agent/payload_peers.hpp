// Payloads between two machines that are not the server's go from one agent to the other
// once (docs/multi-host.md): each agent listens on its machine's address for the others,
// which prove themselves with the run's secret, and writes what they send into its ranks'
// memory; it connects to the others, once each, to send them its ranks' bytes.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "s4bxi/frame_stream.hpp"

namespace s4bxi::agent {

class PayloadPeers {
public:
    // Listens on `local_address` (this machine's end of the server connection), any port.
    PayloadPeers(const std::string& local_address, std::string secret);
    ~PayloadPeers();
    PayloadPeers(const PayloadPeers&) = delete;
    PayloadPeers& operator=(const PayloadPeers&) = delete;

    // "HOST:PORT", where the others reach this agent.
    const std::string& address() const { return address_; }

    // Writes `length` bytes into process `pid` at `address` on the machine whose agent
    // listens at `machine`; false when they could not all be written there.
    bool write_there(const std::string& machine, int32_t pid, uint64_t address, const uint8_t* bytes, uint64_t length);

private:
    void accept_peers();
    void serve_peer(int fd);
    remote::FrameStream* peer(const std::string& machine);

    std::string secret_;
    std::string address_;
    int listen_fd_ = -1;
    std::atomic<bool> stop_{false};
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<remote::FrameStream>> peers_;
    std::vector<std::thread> served_;
    std::thread acceptor_;
};

}  // namespace s4bxi::agent
