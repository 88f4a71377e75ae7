// Pure time logic shared by the rank side (time_interpose.cpp, seccomp_filter.cpp) and the
// server side (simkernel/services/seccomp_supervisor.cpp): clock classification, timespec
// validation and arithmetic, and the mapping from a rank's virtual clock (seconds of
// simulated time) to the values each POSIX clock shows. Header-only, no dependencies, so
// both sides compute bit-identical answers and the unit tests can check it directly.
#pragma once

#include <time.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace s4bxi::timemath {

inline constexpr int64_t kNsPerSec = 1'000'000'000;

// CLOCK_MONOTONIC (and its _RAW/_COARSE/BOOTTIME variants) shows simulated time plus this
// fixed offset, so that a monotonic reading is never 0 (some programs use 0 as "unset")
// and does not look like CLOCK_REALTIME either.
inline constexpr int64_t kMonotonicOffsetNs = 1000 * kNsPerSec;

// Linux clock ids, spelled out so that both sides agree whatever the libc headers define.
inline constexpr clockid_t kRealtime = 0, kMonotonic = 1, kProcessCpu = 2, kThreadCpu = 3, kMonotonicRaw = 4,
                           kRealtimeCoarse = 5, kMonotonicCoarse = 6, kBoottime = 7, kRealtimeAlarm = 8,
                           kBoottimeAlarm = 9, kTai = 11;

enum class ClockKind {
    Realtime,   // epoch + simulated time: REALTIME, REALTIME_COARSE, REALTIME_ALARM, TAI
    Monotonic,  // offset + simulated time: MONOTONIC, MONOTONIC_RAW, MONOTONIC_COARSE, BOOTTIME, BOOTTIME_ALARM
    Cpu,        // CPU clocks (PROCESS/THREAD_CPUTIME and every negative id: other processes'
                // and threads' CPU clocks, posix clock fds): always real
    Invalid,    // not a clock the kernel knows (10, >= 12): left to the real function (EINVAL)
};

constexpr ClockKind classify_clock(clockid_t id)
{
    if (id < 0) return ClockKind::Cpu;
    switch (id) {
    case kRealtime:
    case kRealtimeCoarse:
    case kRealtimeAlarm:
    case kTai: return ClockKind::Realtime;
    case kMonotonic:
    case kMonotonicRaw:
    case kMonotonicCoarse:
    case kBoottime:
    case kBoottimeAlarm: return ClockKind::Monotonic;
    case kProcessCpu:
    case kThreadCpu: return ClockKind::Cpu;
    default: return ClockKind::Invalid;
    }
}

constexpr bool is_virtual_clock(clockid_t id)
{
    ClockKind kind = classify_clock(id);
    return kind == ClockKind::Realtime || kind == ClockKind::Monotonic;
}

// Clocks whose clock_nanosleep is simulated. The kernel refuses to sleep on the _RAW and
// _COARSE clocks (EOPNOTSUPP) and on the _ALARM clocks without CAP_WAKE_ALARM (EPERM):
// those calls are left to the kernel, which fails them at once.
constexpr bool is_virtual_sleep_clock(clockid_t id)
{
    return id == kRealtime || id == kMonotonic || id == kBoottime || id == kTai;
}

// As nanosleep(2) and clock_nanosleep(2) check it (EINVAL otherwise).
constexpr bool timespec_valid(const timespec& ts)
{
    return ts.tv_sec >= 0 && ts.tv_nsec >= 0 && ts.tv_nsec < kNsPerSec;
}

// Saturating: a huge tv_sec gives INT64_MAX nanoseconds (292 years) rather than overflow.
constexpr int64_t timespec_to_ns(const timespec& ts)
{
    constexpr int64_t kMaxSec = std::numeric_limits<int64_t>::max() / kNsPerSec - 1;
    if (ts.tv_sec > kMaxSec) return std::numeric_limits<int64_t>::max();
    if (ts.tv_sec < -kMaxSec) return std::numeric_limits<int64_t>::min();
    return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

// Floor division, so that negative values still give 0 <= tv_nsec < 1e9.
constexpr timespec ns_to_timespec(int64_t ns)
{
    int64_t sec = ns / kNsPerSec;
    int64_t rem = ns % kNsPerSec;
    if (rem < 0) {
        rem += kNsPerSec;
        sec -= 1;
    }
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(sec);
    ts.tv_nsec = static_cast<long>(rem);
    return ts;
}

// Seconds (double) to the nearest nanosecond, saturating. Rounding to nearest (not
// truncating) keeps 4.9999999999 from showing as 4.999999999 s, and is monotonic.
inline int64_t seconds_to_ns(double seconds)
{
    if (std::isnan(seconds)) return 0;
    constexpr double kLimit = 9.2e18;
    double ns = seconds * 1e9;
    if (ns >= kLimit) return std::numeric_limits<int64_t>::max();
    if (ns <= -kLimit) return std::numeric_limits<int64_t>::min();
    return std::llround(ns);
}

constexpr double ns_to_seconds(int64_t ns)
{
    // Split so that whole seconds stay exact in the double.
    return static_cast<double>(ns / kNsPerSec) + static_cast<double>(ns % kNsPerSec) * 1e-9;
}

constexpr double timespec_to_seconds(const timespec& ts)
{
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The epoch (seconds since 1970 at simulated time 0) in nanoseconds. Whole seconds and
// the fraction are converted separately: epoch + now computed in a double would lose
// everything below ~240 ns.
inline int64_t epoch_to_ns(double epoch)
{
    if (!(epoch >= 0.0) || epoch > 9.0e9) return 0;
    double whole = std::floor(epoch);
    return static_cast<int64_t>(whole) * kNsPerSec + std::llround((epoch - whole) * 1e9);
}

// Saturating a + b (deadlines may be "forever": INT64_MAX nanoseconds).
constexpr int64_t saturating_add(int64_t a, int64_t b)
{
    if (b > 0 && a > std::numeric_limits<int64_t>::max() - b) return std::numeric_limits<int64_t>::max();
    if (b < 0 && a < std::numeric_limits<int64_t>::min() - b) return std::numeric_limits<int64_t>::min();
    return a + b;
}

constexpr int64_t saturating_sub(int64_t a, int64_t b)
{
    if (b == std::numeric_limits<int64_t>::min()) return a >= 0 ? std::numeric_limits<int64_t>::max() : a - b;
    return saturating_add(a, -b);
}

// What clock `kind` shows when the rank's virtual clock reads `now_ns` nanoseconds of
// simulated time.
inline int64_t clock_value_at_ns(ClockKind kind, int64_t now_ns, double epoch)
{
    if (now_ns < 0) now_ns = 0;
    int64_t base = kind == ClockKind::Realtime ? epoch_to_ns(epoch) : kMonotonicOffsetNs;
    return saturating_add(base, now_ns);
}

// What clock `kind` shows when the rank's virtual clock reads `now_s` seconds.
inline int64_t clock_value_ns(ClockKind kind, double now_s, double epoch)
{
    return clock_value_at_ns(kind, seconds_to_ns(now_s), epoch);
}

// The rank's threads agree on the time (docs/time.md, "On which threads"). The simulated
// thread reads the virtual clock itself; every other thread of the rank reads it as the
// simulated thread last saw it, continued at the host's pace:
//
//     other threads' virtual clock = host CLOCK_MONOTONIC + offset,
//     offset = virtual clock - host CLOCK_MONOTONIC, both taken by the simulated thread at
//              its last clock reading or reply (wire::Slot::threads_clock_offset_ns).
//
// So a deadline computed on one thread means the same instant on another, while the other
// threads' time still passes in real time (their sleeps and timeouts are real).
constexpr int64_t threads_clock_offset(int64_t virtual_ns, int64_t host_monotonic_ns)
{
    return saturating_sub(virtual_ns, host_monotonic_ns);
}

constexpr int64_t other_thread_virtual_ns(int64_t host_monotonic_ns, int64_t offset_ns)
{
    int64_t now = saturating_add(host_monotonic_ns, offset_ns);
    return now < 0 ? 0 : now;
}

// A thread other than the simulated one that makes Portals calls reads the date of the
// latest reply to such a thread (`sim_ns`, given when the host's CLOCK_MONOTONIC showed
// `wall_ns`): its code between calls takes no simulated time, as the simulated thread's
// takes none under the zero CPU model, so that intervals it times between calls are the
// simulation's. Real time counts again only past kCallingThreadGraceNs without a reply
// (the simulation stalled, or the rank's threads wait for something outside it), so a
// thread that waits for a date on the clock, making no call, still gets there.
inline constexpr int64_t kCallingThreadGraceNs = 10'000'000;

constexpr int64_t calling_thread_virtual_ns(int64_t host_monotonic_ns, int64_t sim_ns, int64_t wall_ns)
{
    int64_t since = saturating_sub(host_monotonic_ns, wall_ns);
    return since > kCallingThreadGraceNs ? saturating_add(sim_ns, since - kCallingThreadGraceNs) : sim_ns;
}

// An absolute deadline a rank's thread computed on one of its virtual clocks (which shows
// `clock_now_ns` now), moved to the host's clock of the same id (which shows
// `host_now_ns`): same remaining time. Blocking calls whose deadline the kernel compares
// with the host's clock (pthread_cond_timedwait, sem_timedwait, ...) get this one.
constexpr int64_t host_deadline_ns(int64_t deadline_ns, int64_t clock_now_ns, int64_t host_now_ns)
{
    return saturating_add(host_now_ns, saturating_sub(deadline_ns, clock_now_ns));
}

// How long a clock_nanosleep(clock of `kind`, flags, req) must sleep when the rank's
// clock shows `clock_now_ns` on that clock: req itself when relative, the distance to req
// when absolute (TIMER_ABSTIME), never negative. The request must be valid.
constexpr int64_t sleep_duration_ns(bool absolute, const timespec& req, int64_t clock_now_ns)
{
    int64_t target = timespec_to_ns(req);
    if (!absolute) return target;
    return target > clock_now_ns ? target - clock_now_ns : 0;
}

// The CPU clock as the rank's virtual clock counts it: while the simulated thread runs the
// MPI library's code, whose cost a model charges instead (docs/time.md "The MPI library's
// code"), the virtual clock stands still from `cpu_frozen_ns` (wire::Slot::cpu_frozen_ns;
// 0: it runs with the CPU clock), for kLibraryFreezeNs of CPU time at most: a library that
// spins past that between two Portals calls waits for progress outside the simulation (a
// TCP socket, shared memory), which takes time as any compute does.
inline constexpr uint64_t kLibraryFreezeNs = 100'000;

constexpr uint64_t library_excluded_ns(uint64_t cpu_now_ns, uint64_t cpu_frozen_ns)
{
    if (cpu_frozen_ns == 0 || cpu_now_ns <= cpu_frozen_ns) return 0;
    uint64_t spent = cpu_now_ns - cpu_frozen_ns;
    return spent < kLibraryFreezeNs ? spent : kLibraryFreezeNs;
}

constexpr uint64_t charged_cpu_ns(uint64_t cpu_now_ns, uint64_t cpu_frozen_ns)
{
    return cpu_now_ns - library_excluded_ns(cpu_now_ns, cpu_frozen_ns);
}

// The rank's virtual clock as the server computes it from the slot (see wire::Slot):
// measured model: sim_time_at_reply + cpu_since_reply * cpu_factor; zero model: sim_time_at_reply.
constexpr double virtual_clock(double sim_time_at_reply, uint64_t cpu_at_reply_ns, uint64_t cpu_now_ns,
                               uint64_t cpu_frozen_ns, double cpu_factor, bool zero_cpu_model)
{
    uint64_t cpu = charged_cpu_ns(cpu_now_ns, cpu_frozen_ns);
    if (zero_cpu_model || cpu <= cpu_at_reply_ns) return sim_time_at_reply;
    return sim_time_at_reply + static_cast<double>(cpu - cpu_at_reply_ns) * 1e-9 * cpu_factor;
}

}  // namespace s4bxi::timemath
