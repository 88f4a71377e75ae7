// The ranks of this machine: they register on the run's socket as they would with the
// server, get a channel of this machine's memory, and ring this machine's doorbell; their
// channels and the server's shadows of them are kept the same (s4bxi/channel_sync.hpp).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "s4bxi/channel_sync.hpp"
#include "s4bxi/frame_stream.hpp"
#include "s4bxi/wire.hpp"
#include "services/seccomp_supervisor.hpp"

namespace s4bxi::agent {

struct LocalRank {
    int32_t rank = -1;
    pid_t pid = 0;
    int socket_fd = -1;
    int slot_fd = -1;
    uint8_t* channel = nullptr;
    std::unique_ptr<remote::ChannelSync> sync;
    wire::Welcome welcome{};
    bool answered = false;          // the server's welcome came (under the ranks' mutex)
    std::atomic<bool> active{false};  // registered: its channel is relayed
    bool gone = false;              // its socket ended; the server was told
};

class LocalRanks {
public:
    LocalRanks(remote::FrameStream& server, sim::SeccompSupervisor& trap);
    ~LocalRanks();

    // The accept loop of the registration socket; returns when `stop` is set.
    void serve_registrations(int listen_fd, const std::atomic<bool>& stop);
    // Relays every rank's channel to the server after each ring of the doorbell (and every
    // few milliseconds), and tells the server of ranks whose socket ended.
    void relay(const std::atomic<bool>& stop);

    // From the server's frames (the reader thread).
    void welcomed(int32_t rank, const wire::Welcome& welcome);
    bool apply(int32_t rank, const uint8_t* delta, size_t size);

    // Whether every rank that registered has ended.
    bool all_gone();
    // Wakes the relay (the run ends).
    void ring();

private:
    void register_rank(int fd);
    void reattach(LocalRank& r);
    LocalRank* find(int32_t rank);
    void relay_once(std::vector<uint8_t>& delta);

    remote::FrameStream& server_;
    sim::SeccompSupervisor& trap_;  // the ranks' trapped time system calls
    int doorbell_fd_ = -1;
    wire::Doorbell* doorbell_ = nullptr;
    std::mutex mutex_;
    std::condition_variable answered_;
    std::map<int32_t, std::unique_ptr<LocalRank>> ranks_;
};

}  // namespace s4bxi::agent
