// Trap for time syscalls made directly (not through libc), served by the server.
//
// The filter sends clock_gettime / gettimeofday / time / nanosleep / clock_nanosleep on
// non-CPU clocks to the server as seccomp user notifications (the server's
// SeccompSupervisor answers them with simulated time for the rank's simulated thread, and
// lets every other thread and every descendant through unchanged).
//
// A syscall that carries kUntrappedMagic in its first unused argument register is not
// trapped: the kernel ignores that register, the filter does not. The interposer's own
// real-time reads on the simulated thread must go through the untrapped_* helpers below
// (or the vDSO), never through a plain syscall(SYS_clock_gettime, CLOCK_MONOTONIC, ...),
// which would come back with simulated time.
#pragma once

#include <sys/time.h>
#include <time.h>

#include <cstdint>

namespace s4bxi::interpose {

// Installs the seccomp user-notification filter on this rank; returns the listener fd
// to hand to the server, or -1 when the trap is not available (then only symbol
// interposition is active). Sets PR_SET_NO_NEW_PRIVS. The filter applies to the calling
// thread and to every thread and process it creates later; call it from the simulated
// thread before other threads exist. After it returns, a trapped syscall of the
// simulated thread blocks until the server serves the listener.
int install_time_trap();

// Same, choosing whether to ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux >= 5.19:
// once the server has picked a notification up, only a fatal signal interrupts the
// syscall, so a simulated sleep is never cut in half by a signal). install_time_trap()
// tries with it, then without. Exposed for the tests.
int install_time_trap(bool wait_killable);

// Never trapped (see above). Same return convention as syscall(2): -1 and errno.
inline constexpr uint64_t kUntrappedMagic = 0x53344258495f5254ull;  // "S4BXI_RT"
long untrapped_clock_gettime(clockid_t clock, timespec* ts);
long untrapped_gettimeofday(timeval* tv, void* tz);
long untrapped_nanosleep(const timespec* req, timespec* rem);
long untrapped_clock_nanosleep(clockid_t clock, int flags, const timespec* req, timespec* rem);

}  // namespace s4bxi::interpose
