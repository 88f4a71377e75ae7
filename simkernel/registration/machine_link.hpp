// The server's end of an agent's connection: a machine other than the server's, with ranks
// of the run on it (docs/multi-host.md). A thread of its own reads the agent's frames:
// ranks that register there (handed to the server's registration loop), what changed in
// their channels (applied to the server's shadows of them, then the gate's doorbell rung,
// as a local rank rings it), their ends, and the results of the server's calls on their
// processes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "registration/rank_socket.hpp"
#include "registration/remote_processes.hpp"
#include "s4bxi/frame_stream.hpp"
#include "s4bxi/remote_wire.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;

class MachineLink {
public:
    // `fd`: the agent's connection, past its greeting. `doorbell`: the gate's.
    MachineLink(int fd, std::string machine, std::string peer, wire::Doorbell& doorbell);
    ~MachineLink();
    MachineLink(const MachineLink&) = delete;
    MachineLink& operator=(const MachineLink&) = delete;

    // The agent's host name, and where it connected from: for messages.
    const std::string& machine() const { return machine_; }
    const std::string& peer() const { return peer_; }
    // How the server reaches the processes of that machine.
    const ProcessAccess& processes() const { return processes_; }

    // The registration loop: the next rank that said hello on that machine, if any.
    bool next_hello(wire::Hello& hello);
    void refuse(int32_t rank, const std::string& reason);
    // The rank is registered: its welcome, then the shadow's first delta (what the server
    // wrote into the channel at registration).
    bool welcome(RankRecord& r, const wire::Welcome& welcome);

    // After the server published something in the rank's shadow (a reply, a posted
    // command served, a parked wait's end): what changed goes to the agent.
    void ship(RankRecord& r);

    // A call on a process of that machine; blocks until its result. False when the agent
    // is gone or has not answered within kCallSeconds.
    bool call(const remote::Call& call, const void* bytes, size_t length, remote::Result& result,
              std::vector<uint8_t>* out);
    static constexpr double kCallSeconds = 60.0;

    // Moves `length` bytes of a process of this machine to a process of `target`'s (this
    // one or another, whose agent this one reaches directly: never through the server's
    // machine). False when not all of them arrived.
    bool move(pid_t from_pid, uint64_t from, const MachineLink& target, pid_t to_pid, uint64_t to, uint64_t length);

    bool gone() const { return gone_.load(std::memory_order_acquire); }
    // Whether a rank registered there (or said hello): a machine without any may leave.
    bool has_ranks() const;
    std::string why_gone() const;

    // The gate's look at a rank of that machine: a new program image it exec'd (the agent
    // answered its re-attach and passed its hello on), and whether its socket ended.
    SocketStatus serve_rank(RankRecord& r);

    // The run is over: the agent may end.
    void bye();

private:
    void read_frames();
    void lost(const std::string& why);
    RankRecord* find(int32_t rank);

    remote::FrameStream stream_;
    std::string machine_, peer_;
    wire::Doorbell& doorbell_;
    std::atomic<bool> gone_{false};
    std::atomic<bool> said_bye_{false};  // the run is over: the agent's leaving is expected
    mutable std::mutex mutex_;
    std::condition_variable results_;
    std::string why_gone_;
    std::string payload_address_;  // where the other agents reach this one (remote::Kind::PayloadAddress)
    std::deque<wire::Hello> hellos_;
    std::deque<wire::Hello> new_images_;  // re-attaches after exec, in their order
    std::map<int32_t, RankRecord*> ranks_;
    struct Pending {
        bool done = false;
        remote::Result result;
        std::vector<uint8_t> bytes;
    };
    std::map<uint64_t, Pending> pending_;
    uint64_t next_call_ = 1;
    RemoteProcesses processes_{*this};
    std::thread reader_;
};

// After the server published something in a rank's channel that the rank waits for (a
// reply, a posted command served, a parked wait's end): a rank of another machine gets
// what changed; nothing to do for a rank of this one, which shares the memory.
void publish_to_machine(RankRecord& r);

}  // namespace s4bxi::sim
