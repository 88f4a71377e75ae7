// How both ends of the channel wait for the other before sleeping on a futex: the rank for
// its reply, the server for a doorbell.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

namespace s4bxi {

// A reply or a request often comes within microseconds, so each side first watches the
// word for a while. Ranks and server may share fewer cores than there are processes:
// after a short spin the waiter gives its core away (sched_yield) to whoever is runnable
// on it, which is often the very process it waits for, and looks again when it gets the
// core back. Only when nothing came after that does it sleep on the futex, whose wake-up
// costs both sides a task switch. bench/run_benchmarks.py measures the effect.
constexpr int kBriefSpins = 20;
constexpr int kBriefYields = 200;

// True as soon as `ready()` holds, false if it still does not after the brief wait.
template <class Ready>
bool brief_wait(Ready ready)
{
    for (int spin = 0; spin < kBriefSpins; ++spin) {
        if (ready()) return true;
        __builtin_ia32_pause();
    }
    for (int turn = 0; turn < kBriefYields; ++turn) {
        if (ready()) return true;
        // The system call itself: a rank's sched_yield() is the interposed, simulated one.
        syscall(SYS_sched_yield);
    }
    return ready();
}

}  // namespace s4bxi
