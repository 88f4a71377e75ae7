// Server side of the direct-syscall time trap (libinterpose/time/seccomp_filter.cpp): serves the
// seccomp user notifications of every rank's filter.
//
// - A notification from the rank's simulated thread is answered with simulated time:
//   clock_gettime / gettimeofday / time get the rank's virtual clock, computed from the
//   slot (sim_time_at_reply + thread CPU time since the reply x cpu_factor) and written into
//   the rank's memory through the access of its machine; nanosleep / clock_nanosleep post a
//   wire::Op::Sleep request into the rank's slot exactly as the rank would, and answer when
//   the reply comes.
// - The rank's other threads get the rank's clock as they see it in the rank: the
//   simulated thread's last reading continued in real time (host CLOCK_MONOTONIC + the
//   slot's threads_clock_offset_ns, which the supervisor updates when it answers the
//   simulated thread); their sleeps are let through.
// - Every descendant (the filter survives fork and exec) is let through unchanged
//   (SECCOMP_USER_NOTIF_FLAG_CONTINUE): real time, never SIGSYS.
//
// One thread polls every listener; sleeps are served by one lazily created thread per
// rank, so a rank's long simulated sleep never delays another rank's clock reads.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "host/process_access.hpp"
#include "s4bxi/wire.hpp"

struct seccomp_notif;

namespace s4bxi::sim {

class SeccompSupervisor {
public:
    SeccompSupervisor();   // starts the polling thread
    ~SeccompSupervisor();  // stops every thread; answers pending sleeps; closes every listener
    SeccompSupervisor(const SeccompSupervisor&) = delete;
    SeccompSupervisor& operator=(const SeccompSupervisor&) = delete;

    // Starts serving `listener_fd` (the supervisor owns it from now on). `pid` is the
    // rank's process, `tid` its simulated thread, both reached through `machine` (which
    // must outlive the supervisor); `slot`/`doorbell` are the server's mappings of the
    // rank's channel and must stay mapped until remove_rank returns.
    void add_rank(int rank, const ProcessAccess& machine, pid_t pid, pid_t tid, int listener_fd, wire::Slot* slot,
                  wire::Doorbell* doorbell, double cpu_factor, bool zero_cpu_model, double epoch);

    // Stops serving the rank's simulated thread: after it returns, the supervisor no
    // longer touches the slot or the doorbell (a sleep still pending is answered at once).
    // The listener stays open, letting every syscall through, until no process uses the
    // filter any more (a rank's children may outlive its Finalize), then it is closed.
    void remove_rank(int rank);

    struct Stats {
        uint64_t served = 0;     // clock reads answered with simulated time
        uint64_t sleeps = 0;     // sleeps served in simulated time
        uint64_t continued = 0;  // syscalls let through (other threads, children, other clocks)
        uint64_t errors = 0;     // answered with an error (EINVAL, EFAULT)
    };
    Stats stats() const;

    struct Entry;  // one listener (implementation detail)

private:
    void poll_loop();
    void handle(Entry& entry);
    // Serves a notification received from `entry` (under its mutex, held by `lock`).
    void serve(Entry& entry, const ::seccomp_notif& request, std::unique_lock<std::mutex>& lock);
    void worker_loop(Entry& entry);
    void wake_poller();

    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<Entry>> entries_;  // every open listener
    uint64_t generation_ = 0;                      // bumped when entries_ changes
    int wake_fd_ = -1;                             // eventfd: add/remove/stop
    std::atomic<bool> stopping_{false};
    std::thread poller_;
    std::atomic<uint64_t> served_{0}, sleeps_{0}, continued_{0}, errors_{0};
};

}  // namespace s4bxi::sim
