// Every rank the server knows: who it is, where it runs, what it is doing right now.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "channel/channel_server.hpp"
#include "host/process_access.hpp"
#include "host/thread_cpu_clock.hpp"
#include "run/outside_wait.hpp"
#include "s4bxi/channel_sync.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankPortals;
class MachineLink;

enum class RankPhase {
    Computing,       // replied to; running its own code
    BlockedOutside,  // replied to, but its CPU clock has not moved for a while
    Waiting,         // its request is in the simulation
    Finished,        // sent Finalize
    Dead,            // vanished without Finalize
};

const char* to_string(RankPhase phase);

// What a proxy waits for, for deadlock reports. Formatted only when a report needs it: a
// polling loop sets it millions of times, a run reports at most once.
class WaitDescription {
public:
    WaitDescription& operator=(const char* text)
    {
        text_ = text;
        format_ = nullptr;
        return *this;
    }
    // `format` returns the text; it captures by value what the text shows.
    template <class Format>
    void set(Format format)
    {
        text_ = nullptr;
        format_ = std::move(format);
    }
    void clear() { *this = nullptr; }
    bool empty() const { return !text_ && !format_; }
    std::string str() const { return format_ ? format_() : text_ ? std::string(text_) : std::string(); }

private:
    const char* text_ = nullptr;
    std::function<std::string()> format_;
};

// The proxy actor serving a request, as the Portals engine sees it: whether the request's
// blocking wait was parked (parked_waits.hpp), and, for another thread's timed poll, its
// timeout, which runs in real time as that thread's clock does.
struct ParkTicket {
    bool parked = false;
    uint32_t index = 0;
    double wall_timeout = -1.0;
};

// A parked wait, on the server's side (wire::ParkedWait is the rank's side).
struct ParkedSlot {
    bool used = false;
    bool other_thread = false;
    pid_t tid = 0;
    uint64_t record = 0;  // the thread's wire::ParkedWait, in the rank's memory
    double wall_deadline = -1.0;  // another thread's timed poll: when it times out (wall seconds)
    bool timed_out = false;
    simgrid::s4u::ActorPtr actor;
};

struct RankRecord {
    int rank = -1;
    // Its process and simulated thread, as its machine numbers them: the server acts on
    // them only through the access of that machine (process()).
    const ProcessAccess* process_access = &local_processes();
    pid_t pid = 0;
    pid_t tid = 0;
    int socket_fd = -1;
    int trap_fd = -1;
    SharedObject<wire::Slot> slot;
    uint32_t nid = 0;
    uint32_t core = 0;
    bool core_to_itself = true;  // no other rank computes on its core (--ppn <= cores per node)
    std::string node_name;
    bool service_mode = false;  // its messages use the NIC's service VNs (--service-ranks)
    // A rank on another machine (docs/multi-host.md): its agent's link, the sync of its
    // channel with the shadow `slot` is here, and whether the agent said it ended (or was
    // lost). Null for a rank of the server's machine.
    MachineLink* machine = nullptr;
    std::unique_ptr<remote::ChannelSync> channel_sync;
    std::atomic<bool> remote_gone{false};

    RankPhase phase = RankPhase::Computing;
    bool throttled = false;  // stopped while it ran ahead of simulated time (rank_throttle.hpp)
    RankPhase phase_before_dispatch = RankPhase::Computing;  // restored after another thread's request
    // Blocked-outside detection: the simulated thread's CPU time last seen; since when (wall
    // seconds) it has been seen asleep at every look, with that CPU time and no new request
    // (< 0: it was not, at the last look); how many requests it had made then.
    uint64_t cpu_seen_ns = 0;
    double asleep_since_wall = -1.0;
    uint64_t asleep_request = 0;
    uint64_t simulated_thread_requests = 0;  // dispatched requests of the simulated thread
    double checked_wall = 0.0;  // when the gate last looked at its socket and CPU clock
    ThreadCpuClock thread_cpu;  // of its simulated thread: how far a computing rank got
    uint32_t aborts_seen = 0;   // the slot's PtlAbort counter, as last acted upon
    bool park_requested = false;      // a thread waits for the turn: park the blocking wait in progress
    bool simulated_thread_parked = false;  // the simulated thread's blocking wait is parked
    std::vector<ParkedSlot> parked;        // as many as threads wait at once; unused ones are reused
    // Threads other than the simulated one that made requests (kernel ids): while one of
    // them lives outside a parked wait, it may make the call another thread waits for.
    std::vector<pid_t> portals_threads;
    double threads_checked_wall = 0.0;
    bool other_thread_may_call = false;  // as last seen
    // Other threads hold the rank's simulated time (scheduling/thread_hold.hpp): while the
    // simulated thread is blocked outside, each thread whose request found work or made a
    // command goes on from that date until its next request. Meanwhile the rank's empty
    // polls are answered at once: time does not move for them to wait.
    std::vector<pid_t> holders;
    uint32_t requests_under_hold = 0;  // since work was last found
    // Threads (other than the simulated one) whose last request found work: their next
    // empty poll is answered at once, as the simulated thread's is from its mirror.
    std::vector<pid_t> free_polls;
    bool free_empty_poll = false;    // the request in service: its empty poll is answered at once
    bool answered_free = false;      // it was
    bool dispatched_holder = false;  // it was a holder's
    // Of the slot's threads_created, those the gate has looked at: each made calls, or was
    // asleep in something else than nanosleep, or was gone (unknown_thread_may_call).
    uint32_t threads_accounted = 0;
    double threads_quiet_since = -1.0;  // when the new ones were first seen quiet (wall seconds)
    // Waiting on memory (memory_waits.hpp): whether the rule applies to the rank, whether
    // it is taken to wait now, and its CPU time when it last got a write; the page faults of
    // its simulated thread when the gate first looked at the budget that began at CPU time
    // memory_fault_window, and the OpenSHMEM waits and tests it had called then
    // (wire::Slot::memory_polls). Until the simulated thread has read its CPU clock after its
    // last reply, the slot's reading still is the one from before (reply_reading_before).
    bool memory_waits = false;
    bool threads_lockstep = false;  // its threads may run in lockstep (Config::lockstep)
    bool waits_on_memory = false;
    bool reply_reading_due = false;
    uint64_t reply_reading_before = 0;
    uint64_t memory_budget_base_ns = 0;
    uint64_t memory_fault_window = UINT64_MAX;
    uint64_t memory_fault_mark = 0;
    uint32_t memory_poll_mark = 0;

    // Lockstep threads (libinterpose/threads/lockstep.hpp): set by a lockstep request of
    // the rank's, cleared by a request of its simulated thread alone. While set, the rank
    // holds simulated time but while a request of its is posted or in the simulation.
    bool lockstep = false;
    uint64_t lockstep_done = 0;   // its lockstep waits that ended (wire::Reply::lockstep_done)
    uint64_t memory_writes = 0;   // NIC writes into its memory while in lockstep (wire::Reply)
    bool lockstep_idle = false;   // its LockstepIdle request waits for one more to end
    double lockstep_held_since = -1.0;  // wall seconds since it holds time with no request
    // Wall seconds since its threads, all spinning, first waited for a write into its memory
    // with nothing under way in the simulation (gate.cpp: end_vain_memory_waits).
    double lockstep_vain_since = -1.0;

    // Simulation side.
    simgrid::s4u::SemaphorePtr dispatch;  // the proxy waits on it for the next request
    simgrid::s4u::SemaphorePtr lockstep_wakeup;  // a LockstepIdle waits on it
    simgrid::s4u::ActorPtr proxy;
    wire::Request request{};             // the request being served
    ParkTicket* serving = nullptr;       // its proxy's ticket, while it is being served
    bool in_service = false;             // dispatched, not answered yet
    // The request being served is a command the rank posted without waiting (wire::
    // PostedCommand): it gets no reply. posted_taken counts the posted commands dispatched.
    bool serving_posted = false;
    uint32_t posted_taken = 0;
    uint64_t posted_served = 0;  // for the run statistics
    WaitDescription waiting_on;          // what the proxy waits for, for deadlock reports
    RankPortals* portals = nullptr;      // owned by the Portals engine
    // A wait outside the simulation the rank announced (outside_waits.hpp), until its
    // next request: its state, the call, and since when (wall seconds) it holds time.
    OutsideWait outside_wait = OutsideWait::None;
    std::string outside_what;
    double outside_since_wall = 0.0;

    // Results.
    double end_time = 0.0;
    int exit_status = 0;
    uint64_t portals_ops = 0;
    uint64_t portals_local_ops = 0;  // of which answered in the rank's process (its mirror)
    uint64_t messages_sent = 0;   // Put, Get, Atomic... issued (triggered ones included)
    uint64_t bytes_sent = 0;
    double compute_time = 0.0;    // simulated time of injected compute, the MPI library's charges included
    double mpi_library_time = 0.0;  // of which the MPI library model charged (docs/time.md)
    uint64_t involuntary_switches = 0;  // of its simulated thread, at Finalize: the host's other work
    double portals_time = 0.0;    // simulated time inside Portals calls (waits included)
    double sleep_time = 0.0;      // simulated time in sleep calls
    uint64_t peak_resident_bytes = 0;  // VmHWM when it finalized (0: not known)
    // Decisions taken from what the host showed (CPU time, thread states), which may fall
    // otherwise in another run: when two runs differ, these say which rule took the rank.
    struct HostDecisions {
        uint64_t memory_waits = 0;     // taken to wait on its memory (a budget of CPU time with no call)
        uint64_t memory_waits_by_reads = 0;  // of those, in no OpenSHMEM wait or test (the longer budget)
        uint64_t blocked_outside = 0;  // taken for blocked outside (its thread asleep, no CPU time used)
        uint64_t lockstep_idles = 0;   // its threads in lockstep all waited or spun (LockstepIdle)
        HostDecisions& operator+=(const HostDecisions& other)
        {
            memory_waits += other.memory_waits;
            memory_waits_by_reads += other.memory_waits_by_reads;
            blocked_outside += other.blocked_outside;
            lockstep_idles += other.lockstep_idles;
            return *this;
        }
    } host_decisions;
    int crash_signal = 0;
    std::string crash_report;

    // How the server reaches the rank's process (`pid`, `tid`): its memory, its threads.
    const ProcessAccess& process() const { return *process_access; }
};

// The rank has posted commands the gate has not dispatched yet.
inline bool posted_pending(const RankRecord& r)
{
    return r.slot.object->posted_head.load(std::memory_order_acquire) != r.posted_taken;
}

class Registry {
public:
    std::vector<std::unique_ptr<RankRecord>>& ranks() { return ranks_; }
    RankRecord* find(int rank);
    size_t size() const { return ranks_.size(); }
    RankRecord& add(std::unique_ptr<RankRecord> record);

private:
    std::vector<std::unique_ptr<RankRecord>> ranks_;  // sorted by rank
};

}  // namespace s4bxi::sim
