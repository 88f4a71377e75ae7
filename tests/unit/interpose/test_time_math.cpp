// Pure time logic shared by the interposer and the seccomp supervisor (time_math.hpp).
#include <catch2/catch.hpp>

#include <limits>

#include <climits>
#include <cmath>

#include "s4bxi/time_math.hpp"

using namespace s4bxi::timemath;

TEST_CASE("clock ids are classified as the kernel numbers them", "[interpose][time]")
{
    // The constants must be the kernel's own.
    CHECK(kRealtime == CLOCK_REALTIME);
    CHECK(kMonotonic == CLOCK_MONOTONIC);
    CHECK(kProcessCpu == CLOCK_PROCESS_CPUTIME_ID);
    CHECK(kThreadCpu == CLOCK_THREAD_CPUTIME_ID);
    CHECK(kMonotonicRaw == CLOCK_MONOTONIC_RAW);
    CHECK(kRealtimeCoarse == CLOCK_REALTIME_COARSE);
    CHECK(kMonotonicCoarse == CLOCK_MONOTONIC_COARSE);
    CHECK(kBoottime == CLOCK_BOOTTIME);
    CHECK(kRealtimeAlarm == CLOCK_REALTIME_ALARM);
    CHECK(kBoottimeAlarm == CLOCK_BOOTTIME_ALARM);
    CHECK(kTai == CLOCK_TAI);

    for (clockid_t id : {CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_REALTIME_ALARM, CLOCK_TAI})
        CHECK(classify_clock(id) == ClockKind::Realtime);
    for (clockid_t id : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME,
                         CLOCK_BOOTTIME_ALARM})
        CHECK(classify_clock(id) == ClockKind::Monotonic);
    CHECK(classify_clock(CLOCK_PROCESS_CPUTIME_ID) == ClockKind::Cpu);
    CHECK(classify_clock(CLOCK_THREAD_CPUTIME_ID) == ClockKind::Cpu);
    // Another process's CPU clock, as clock_getcpuclockid() builds it, and a posix clock fd.
    clockid_t other_process;
    REQUIRE(clock_getcpuclockid(1, &other_process) == 0);
    CHECK(other_process < 0);
    CHECK(classify_clock(other_process) == ClockKind::Cpu);
    CHECK(classify_clock(static_cast<clockid_t>((~3u << 3) | 3)) == ClockKind::Cpu);
    CHECK(classify_clock(10) == ClockKind::Invalid);
    CHECK(classify_clock(12) == ClockKind::Invalid);
    CHECK(classify_clock(INT_MAX) == ClockKind::Invalid);

    CHECK(is_virtual_clock(CLOCK_MONOTONIC));
    CHECK_FALSE(is_virtual_clock(CLOCK_THREAD_CPUTIME_ID));
    CHECK_FALSE(is_virtual_clock(10));
    CHECK(is_virtual_sleep_clock(CLOCK_REALTIME));
    CHECK(is_virtual_sleep_clock(CLOCK_MONOTONIC));
    CHECK(is_virtual_sleep_clock(CLOCK_BOOTTIME));
    CHECK(is_virtual_sleep_clock(CLOCK_TAI));
    CHECK_FALSE(is_virtual_sleep_clock(CLOCK_MONOTONIC_RAW));
    CHECK_FALSE(is_virtual_sleep_clock(CLOCK_REALTIME_COARSE));
    CHECK_FALSE(is_virtual_sleep_clock(CLOCK_PROCESS_CPUTIME_ID));
}

TEST_CASE("timespec validation follows nanosleep(2)", "[interpose][time]")
{
    CHECK(timespec_valid({0, 0}));
    CHECK(timespec_valid({5, 999'999'999}));
    CHECK_FALSE(timespec_valid({0, 1'000'000'000}));
    CHECK_FALSE(timespec_valid({0, -1}));
    CHECK_FALSE(timespec_valid({-1, 0}));
}

TEST_CASE("timespec and nanosecond conversions", "[interpose][time]")
{
    CHECK(timespec_to_ns({2, 500}) == 2 * kNsPerSec + 500);
    CHECK(timespec_to_ns({LONG_MAX, 0}) == INT64_MAX);  // saturates instead of overflowing

    timespec ts = ns_to_timespec(3 * kNsPerSec + 7);
    CHECK(ts.tv_sec == 3);
    CHECK(ts.tv_nsec == 7);
    ts = ns_to_timespec(-1);  // floor division keeps tv_nsec in range
    CHECK(ts.tv_sec == -1);
    CHECK(ts.tv_nsec == kNsPerSec - 1);

    CHECK(seconds_to_ns(5.0) == 5 * kNsPerSec);
    CHECK(seconds_to_ns(4.9999999999) == 5 * kNsPerSec);  // nearest, not truncated
    CHECK(seconds_to_ns(0.1) == 100'000'000);
    CHECK(seconds_to_ns(1e300) == INT64_MAX);
    CHECK(seconds_to_ns(std::nan("")) == 0);

    CHECK(ns_to_seconds(2 * kNsPerSec) == 2.0);
    CHECK(ns_to_seconds(1'500'000'000) == 1.5);
    CHECK(timespec_to_seconds({2, 500'000'000}) == 2.5);
}

TEST_CASE("the epoch keeps nanoseconds that a double sum would lose", "[interpose][time]")
{
    const double epoch = 1700000000.25;
    CHECK(epoch_to_ns(epoch) == 1700000000 * kNsPerSec + 250'000'000);
    // 1 ns of simulated time after simulated 0 shows as 1 ns on CLOCK_REALTIME.
    CHECK(clock_value_ns(ClockKind::Realtime, 1e-9, epoch) - clock_value_ns(ClockKind::Realtime, 0.0, epoch) == 1);
    CHECK(epoch_to_ns(-5.0) == 0);
}

TEST_CASE("what each clock shows", "[interpose][time]")
{
    const double epoch = 1700000000.25;
    CHECK(clock_value_ns(ClockKind::Monotonic, 0.0, epoch) == kMonotonicOffsetNs);
    CHECK(clock_value_ns(ClockKind::Monotonic, 5.0, epoch) == kMonotonicOffsetNs + 5 * kNsPerSec);
    CHECK(clock_value_ns(ClockKind::Realtime, 5.0, epoch) == epoch_to_ns(epoch) + 5 * kNsPerSec);
    CHECK(clock_value_ns(ClockKind::Monotonic, -1.0, epoch) == kMonotonicOffsetNs);  // never before 0
    CHECK(kMonotonicOffsetNs > 0);
}

TEST_CASE("other threads continue the simulated thread's reading at the host's pace", "[interpose][time]")
{
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    // Read at simulated 12 s while the host's monotonic clock showed 5000 s.
    const int64_t offset = threads_clock_offset(12 * kNsPerSec, 5000 * kNsPerSec);
    CHECK(other_thread_virtual_ns(5000 * kNsPerSec, offset) == 12 * kNsPerSec);
    CHECK(other_thread_virtual_ns(5000 * kNsPerSec + 250'000'000, offset) == 12 * kNsPerSec + 250'000'000);
    // Never before simulated time 0; no overflow at the extremes.
    CHECK(other_thread_virtual_ns(0, threads_clock_offset(0, 5000 * kNsPerSec)) == 0);
    CHECK(other_thread_virtual_ns(kMax, kMax) == kMax);
    CHECK(saturating_add(kMax, 1) == kMax);
    CHECK(saturating_add(std::numeric_limits<int64_t>::min(), -1) == std::numeric_limits<int64_t>::min());
    CHECK(saturating_sub(0, std::numeric_limits<int64_t>::min()) == kMax);
    CHECK(saturating_sub(-1, std::numeric_limits<int64_t>::min()) == kMax);
}

TEST_CASE("a thread that makes calls reads the latest reply's date, and real time only past the grace",
          "[interpose][time]")
{
    // A reply dated simulated 12 s came when the host's monotonic clock showed 5000 s.
    const int64_t sim = 12 * kNsPerSec, wall = 5000 * kNsPerSec;
    CHECK(calling_thread_virtual_ns(wall, sim, wall) == sim);
    CHECK(calling_thread_virtual_ns(wall + kCallingThreadGraceNs, sim, wall) == sim);
    CHECK(calling_thread_virtual_ns(wall + kCallingThreadGraceNs + 7, sim, wall) == sim + 7);
    CHECK(calling_thread_virtual_ns(wall + kCallingThreadGraceNs + kNsPerSec, sim, wall) == sim + kNsPerSec);
    // A reading taken on another core just before the stamp: no step back.
    CHECK(calling_thread_virtual_ns(wall - 1000, sim, wall) == sim);
}

TEST_CASE("absolute deadlines move to the host's clock with the time that remains", "[interpose][time]")
{
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
    // The rank's clock shows 1002 s, the host's 7000 s: a deadline 2 s ahead stays 2 s ahead.
    CHECK(host_deadline_ns(1004 * kNsPerSec, 1002 * kNsPerSec, 7000 * kNsPerSec) == 7002 * kNsPerSec);
    // Already past: past on the host too.
    CHECK(host_deadline_ns(1000 * kNsPerSec, 1002 * kNsPerSec, 7000 * kNsPerSec) == 6998 * kNsPerSec);
    // "Forever" stays forever.
    CHECK(host_deadline_ns(kMax, 1002 * kNsPerSec, 7000 * kNsPerSec) == kMax);
}

TEST_CASE("sleep durations, relative and absolute", "[interpose][time]")
{
    CHECK(sleep_duration_ns(false, {2, 0}, 123) == 2 * kNsPerSec);
    CHECK(sleep_duration_ns(true, {10, 0}, 7 * kNsPerSec) == 3 * kNsPerSec);
    CHECK(sleep_duration_ns(true, {10, 0}, 10 * kNsPerSec) == 0);
    CHECK(sleep_duration_ns(true, {10, 0}, 12 * kNsPerSec) == 0);  // deadline passed
}

TEST_CASE("the server computes a rank's clock from its slot", "[interpose][time]")
{
    // Measured model: sim time at the reply + CPU since the reply, scaled.
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 500'000'000, 0, 1.0, false) == Approx(2.5));
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 500'000'000, 0, 2.0, false) == Approx(3.0));
    // Zero model: the clock does not move between requests.
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 500'000'000, 0, 1.0, true) == 2.0);
    // A CPU reading older than the reply's never goes back in time.
    CHECK(virtual_clock(2.0, 1'000, 500, 0, 1.0, false) == 2.0);
    // In the MPI library's code the clock stands still where it froze, for a while...
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 500'050'000, 1'000 + 500'000'000, 1.0, false) == Approx(2.5));
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 200'000'000, 1'000 + 500'000'000, 1.0, false) == Approx(2.2));
    CHECK(charged_cpu_ns(900, 0) == 900);
    CHECK(charged_cpu_ns(900, 400) == 400);
    CHECK(charged_cpu_ns(400 + kLibraryFreezeNs, 400) == 400);
    // ...then a library that spins on waits for progress outside the simulation: time passes.
    CHECK(charged_cpu_ns(400 + kLibraryFreezeNs + 700, 400) == 1'100);
    CHECK(virtual_clock(2.0, 1'000, 1'000 + 900'000'000, 1'000 + 500'000'000, 1.0, false) ==
          Approx(2.9 - kLibraryFreezeNs * 1e-9));
}
