// How both ends of the channel wait for the other before sleeping on a futex: the rank for
// its reply, the server for a doorbell.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace s4bxi {

// A reply or a request often comes within microseconds, so each side first watches the
// word for a while. Ranks and server may share fewer cores than there are processes:
// after a short spin the waiter gives its core away (sched_yield) to whoever is runnable
// on it, which is often the very process it waits for, and looks again when it gets the
// core back. Only when nothing came after that does it sleep on the futex, whose wake-up
// costs both sides a task switch. bench/run_benchmarks.py measures the effect.
constexpr int kBriefSpins = 20;
constexpr int kBriefYields = 200;
// A yield that kept the waiter off its core this long gave the core to some other
// program's work (a CPU hog, another job), for a whole time slice: every further yield
// would cost as much. Sleeping on the futex is then the faster way back, since a waker
// preempts such work at once. The waiter skips its yields for the next waits, then tries
// again. On a quiet host with more of our processes than cores, a yield may also hand the
// core to another rank for a while: the threshold and the count keep such false alarms
// cheap (with 1 ms and 2000 waits, a quiet MPI ping-pong was about 10 % slower).
constexpr int64_t kSlowYieldNs = 2'000'000;
constexpr int kWaitsWithoutYields = 200;
// Waits left without yields, per process (the state of the host's cores is the same for
// every thread and every caller).
inline std::atomic<int> g_waits_without_yields{0};

// A rank that waits for its reply keeps yielding for this long at least, however fast
// its yields return (an idle core: nothing else wants it): on the 2-core host the 200
// yields (180 ns each) were over in some 40 µs, before the reply to a request of an MPI
// ping-pong came, and the rank slept; the server's wake-up then cost both a task switch.
// Yields that a busy core makes slow end the wait by their count as before.
constexpr int64_t kRankYieldingFloorNs = 300'000;

// True as soon as `ready()` holds, false if it still does not after the brief wait.
// `now_ns()` reads a monotonic clock, in nanoseconds, without a system call. The yields
// go on for `floor_ns` at least.
template <class Ready, class NowNs>
bool brief_wait(Ready ready, NowNs now_ns, int64_t floor_ns = 0)
{
    for (int spin = 0; spin < kBriefSpins; ++spin) {
        if (ready()) return true;
        __builtin_ia32_pause();
    }
    if (int skip = g_waits_without_yields.load(std::memory_order_relaxed); skip > 0) {
        g_waits_without_yields.store(skip - 1, std::memory_order_relaxed);
        return ready();
    }
    const int64_t started = floor_ns > 0 ? now_ns() : 0;
    for (int turn = 0; turn < kBriefYields || (floor_ns > 0 && now_ns() - started < floor_ns); ++turn) {
        if (ready()) return true;
        int64_t before = now_ns();
        // The system call itself: a rank's sched_yield() is the interposed, simulated one.
        syscall(SYS_sched_yield);
        if (now_ns() - before > kSlowYieldNs) {
            g_waits_without_yields.store(kWaitsWithoutYields, std::memory_order_relaxed);
            break;
        }
    }
    return ready();
}

}  // namespace s4bxi
