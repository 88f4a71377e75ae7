// The interposed libc time and host-name entry points (time_interpose.cpp,
// host_identity.cpp), linked into this test with a stub runtime: calls made here go to
// them, exactly as a rank's calls would.
#include <catch2/catch.hpp>

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "stub_runtime.hpp"
#include "time_interpose.hpp"
#include "time_math.hpp"

using namespace s4bxi::timemath;

namespace {

int64_t read_ns(clockid_t clock)
{
    timespec ts{};
    REQUIRE(clock_gettime(clock, &ts) == 0);
    return timespec_to_ns(ts);
}

// The host's monotonic clock, bypassing everything of ours.
int64_t host_monotonic_ns()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return timespec_to_ns(ts);
}

// Keeps the compiler from knowing a pointer is null (libc declares some of them nonnull).
template <class T>
T* hidden(T* pointer)
{
    asm volatile("" : "+r"(pointer));
    return pointer;
}

struct RankFixture {
    RankFixture() { stub::reset(); }
    ~RankFixture() { stub::rank = false; }
};

}  // namespace

TEST_CASE_METHOD(RankFixture, "virtual clocks show simulated time on the simulated thread", "[interpose][time]")
{
    stub::now = 12.5;
    const int64_t realtime = epoch_to_ns(stub::epoch) + seconds_to_ns(12.5);
    const int64_t monotonic = kMonotonicOffsetNs + seconds_to_ns(12.5);
    for (clockid_t id : {CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_TAI}) CHECK(read_ns(id) == realtime);
    for (clockid_t id : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE, CLOCK_BOOTTIME})
        CHECK(read_ns(id) == monotonic);

    timeval tv{};
    REQUIRE(gettimeofday(&tv, nullptr) == 0);
    CHECK(tv.tv_sec == realtime / kNsPerSec);
    CHECK(tv.tv_usec == (realtime % kNsPerSec) / 1000);
    struct timezone tz {
        99, 99
    };
    REQUIRE(gettimeofday(hidden(static_cast<timeval*>(nullptr)), &tz) == 0);  // NULL tv is allowed
    CHECK(tz.tz_minuteswest == 0);

    time_t stored = 0;
    CHECK(time(&stored) == realtime / kNsPerSec);
    CHECK(stored == realtime / kNsPerSec);
    CHECK(time(nullptr) == realtime / kNsPerSec);

    timespec ts{};
    CHECK(timespec_get(&ts, TIME_UTC) == TIME_UTC);
    CHECK(timespec_to_ns(ts) == realtime);

    timespec res{};
    REQUIRE(clock_getres(CLOCK_MONOTONIC, &res) == 0);
    CHECK(res.tv_sec == 0);
    CHECK(res.tv_nsec == 1);

    errno = 0;
    CHECK(clock_gettime(CLOCK_MONOTONIC, hidden(static_cast<timespec*>(nullptr))) == -1);
    CHECK(errno == EFAULT);
}

TEST_CASE_METHOD(RankFixture, "CPU clocks, invalid clocks and other threads stay real", "[interpose][time]")
{
    stub::now = 1e6;  // far from anything the host shows
    const int64_t virtual_monotonic = kMonotonicOffsetNs + seconds_to_ns(1e6);

    // CPU clocks: real, so small for this young process.
    CHECK(read_ns(CLOCK_THREAD_CPUTIME_ID) < virtual_monotonic);
    CHECK(read_ns(CLOCK_PROCESS_CPUTIME_ID) < virtual_monotonic);
    timespec ts{};
    errno = 0;
    CHECK(clock_gettime(10, &ts) == -1);
    CHECK(errno == EINVAL);

    // Another thread of the rank: the host's time.
    int64_t other = 0;
    std::thread([&] {
        timespec t{};
        clock_gettime(CLOCK_MONOTONIC, &t);
        other = timespec_to_ns(t);
    }).join();
    CHECK(std::llabs(other - host_monotonic_ns()) < kNsPerSec);

    // Not a rank at all: the host's time.
    stub::rank = false;
    CHECK(std::llabs(read_ns(CLOCK_MONOTONIC) - host_monotonic_ns()) < kNsPerSec);
    // real_clock_gettime() is never simulated, on any thread.
    stub::rank = true;
    REQUIRE(s4bxi::interpose::real_clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    CHECK(std::llabs(timespec_to_ns(ts) - host_monotonic_ns()) < kNsPerSec);
}

TEST_CASE_METHOD(RankFixture, "sleeps become simulated sleeps", "[interpose][time]")
{
    const int64_t before_host = host_monotonic_ns();
    CHECK(sleep(5) == 0);
    CHECK(usleep(250'000) == 0);
    timespec req{2, 500'000'000};
    CHECK(nanosleep(&req, nullptr) == 0);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &req, nullptr) == 0);
    REQUIRE(stub::sleeps.size() == 4);
    CHECK(stub::sleeps[0] == 5.0);
    CHECK(seconds_to_ns(stub::sleeps[1]) == 250'000'000);
    CHECK(stub::sleeps[2] == 2.5);
    CHECK(stub::sleeps[3] == 2.5);
    // None of it took real time.
    CHECK(host_monotonic_ns() - before_host < kNsPerSec);

    // Absolute deadlines, on the clock they name.
    stub::sleeps.clear();
    stub::now = 10.0;
    timespec deadline = ns_to_timespec(kMonotonicOffsetNs + 13 * kNsPerSec);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr) == 0);
    REQUIRE(stub::sleeps.size() == 1);
    CHECK(stub::sleeps[0] == 3.0);
    CHECK(read_ns(CLOCK_MONOTONIC) == timespec_to_ns(deadline));
    deadline = ns_to_timespec(epoch_to_ns(stub::epoch) + 14 * kNsPerSec);
    CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &deadline, nullptr) == 0);
    REQUIRE(stub::sleeps.size() == 2);
    CHECK(seconds_to_ns(stub::sleeps[1]) == kNsPerSec);
    // A deadline already past returns at once, without a scheduling point.
    CHECK(clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &deadline, nullptr) == 0);
    timespec past = ns_to_timespec(kMonotonicOffsetNs + 13 * kNsPerSec);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &past, nullptr) == 0);
    CHECK(stub::sleeps.size() == 2);

    // A zero sleep is still a scheduling point; sched_yield is one with no cost.
    CHECK(sleep(0) == 0);
    CHECK(stub::sleeps.size() == 3);
    CHECK(sched_yield() == 0);
    CHECK(stub::yields == 1);
}

TEST_CASE_METHOD(RankFixture, "sleep arguments are checked as libc and the kernel do", "[interpose][time]")
{
    timespec bad{0, 1'000'000'000};
    errno = 0;
    CHECK(nanosleep(&bad, nullptr) == -1);
    CHECK(errno == EINVAL);
    bad = {-1, 0};
    CHECK(nanosleep(&bad, nullptr) == -1);
    CHECK(errno == EINVAL);
    errno = 0;
    CHECK(nanosleep(hidden(static_cast<const timespec*>(nullptr)), nullptr) == -1);
    CHECK(errno == EFAULT);
    // clock_nanosleep returns the error number and leaves errno alone.
    errno = 0;
    bad = {0, -5};
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &bad, nullptr) == EINVAL);
    CHECK(errno == 0);
    timespec ok{1, 0};
    CHECK(clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0, &ok, nullptr) == EINVAL);  // as glibc
    CHECK(clock_nanosleep(CLOCK_MONOTONIC_RAW, 0, &ok, nullptr) == EOPNOTSUPP);  // as the kernel
    CHECK(clock_nanosleep(10, 0, &ok, nullptr) == EINVAL);
    CHECK(stub::sleeps.empty());
}

TEST_CASE_METHOD(RankFixture, "off the simulated thread, sleeps are real", "[interpose][time]")
{
    int64_t elapsed = 0;
    std::thread([&] {
        int64_t start = host_monotonic_ns();
        timespec req{0, 30'000'000};
        nanosleep(&req, nullptr);
        usleep(20'000);
        elapsed = host_monotonic_ns() - start;
    }).join();
    CHECK(elapsed >= 50'000'000);
    CHECK(stub::sleeps.empty());
}

TEST_CASE_METHOD(RankFixture, "a rank sees its simulated node's name", "[interpose][host]")
{
    stub::node = "node17";
    char name[256];
    REQUIRE(gethostname(name, sizeof name) == 0);
    CHECK(std::string(name) == "node17");
    struct utsname u {};
    REQUIRE(uname(&u) == 0);
    CHECK(std::string(u.nodename) == "node17");
    CHECK(std::string(u.sysname) == "Linux");  // the rest is real
    // Every thread of a rank.
    std::string from_thread;
    std::thread([&] {
        char n[64];
        if (gethostname(n, sizeof n) == 0) from_thread = n;
    }).join();
    CHECK(from_thread == "node17");
    // Too short a buffer: what fits, and ENAMETOOLONG, as glibc.
    char small[4];
    errno = 0;
    CHECK(gethostname(small, sizeof small) == -1);
    CHECK(errno == ENAMETOOLONG);
    CHECK(std::memcmp(small, "node", 4) == 0);

    // Not a rank: the host's own name.
    stub::rank = false;
    struct utsname real {};
    REQUIRE(syscall(SYS_uname, &real) == 0);
    REQUIRE(gethostname(name, sizeof name) == 0);
    CHECK(std::string(name) == real.nodename);
}
