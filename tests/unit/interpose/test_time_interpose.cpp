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

#include <portals4.h>
#include <pthread.h>
#include <semaphore.h>

#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "s4bxi/time_math.hpp"
#include "stub_runtime.hpp"
#include "time/threads_clock.hpp"
#include "time/time_interpose.hpp"

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

TEST_CASE_METHOD(RankFixture, "CPU clocks and invalid clocks stay real; so does everything outside ranks",
                 "[interpose][time]")
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

    // Not a rank at all: the host's time.
    stub::rank = false;
    CHECK(std::llabs(read_ns(CLOCK_MONOTONIC) - host_monotonic_ns()) < kNsPerSec);
    // real_clock_gettime() is never simulated, on any thread.
    stub::rank = true;
    REQUIRE(s4bxi::interpose::real_clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
    CHECK(std::llabs(timespec_to_ns(ts) - host_monotonic_ns()) < kNsPerSec);
}

// Runs `fn` on another thread of the rank and returns what it returned.
template <class Fn>
auto on_other_thread(Fn fn)
{
    decltype(fn()) result{};
    std::thread([&] { result = fn(); }).join();
    return result;
}

TEST_CASE_METHOD(RankFixture, "other threads continue the simulated thread's clock in real time", "[interpose][time]")
{
    stub::now = 1e6;  // far from anything the host shows
    const int64_t monotonic = read_ns(CLOCK_MONOTONIC);  // the simulated thread's reading
    const int64_t realtime = read_ns(CLOCK_REALTIME);
    REQUIRE(monotonic == kMonotonicOffsetNs + seconds_to_ns(1e6));

    // Another thread reads the same clocks, plus the real time since that reading.
    auto [other_monotonic, other_realtime, other_boottime, gtod_us, seconds] = on_other_thread([] {
        timeval tv{};
        gettimeofday(&tv, nullptr);
        return std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>{
            read_ns(CLOCK_MONOTONIC), read_ns(CLOCK_REALTIME), read_ns(CLOCK_BOOTTIME),
            static_cast<int64_t>(tv.tv_sec) * 1'000'000 + tv.tv_usec, static_cast<int64_t>(time(nullptr))};
    });
    CHECK(other_monotonic >= monotonic);
    CHECK(other_monotonic - monotonic < kNsPerSec / 2);
    CHECK(other_realtime >= realtime);
    CHECK(other_realtime - realtime < kNsPerSec / 2);
    CHECK(other_boottime >= monotonic);
    CHECK(gtod_us >= realtime / 1000);
    CHECK(gtod_us - realtime / 1000 < 500'000);
    CHECK(seconds >= realtime / kNsPerSec);
    CHECK(seconds <= realtime / kNsPerSec + 1);
    timespec res{};
    CHECK(on_other_thread([&] { return clock_getres(CLOCK_MONOTONIC, &res); }) == 0);
    CHECK(res.tv_nsec == 1);

    // Their clock passes in real time while the simulated thread's stands still...
    auto [before, after] = on_other_thread([] {
        int64_t a = read_ns(CLOCK_MONOTONIC);
        timespec nap{0, 50'000'000};
        nanosleep(&nap, nullptr);  // a real sleep on this thread
        return std::pair<int64_t, int64_t>{a, read_ns(CLOCK_MONOTONIC)};
    });
    CHECK(after - before >= 50'000'000);
    CHECK(after - before < kNsPerSec);
    CHECK(read_ns(CLOCK_MONOTONIC) == monotonic);

    // ...and continues from the simulated thread's next reading: 5 simulated seconds later.
    CHECK(sleep(5) == 0);
    const int64_t later = read_ns(CLOCK_MONOTONIC);
    CHECK(later == monotonic + 5 * kNsPerSec);
    int64_t other_later = on_other_thread([] { return read_ns(CLOCK_MONOTONIC); });
    CHECK(other_later >= later);
    CHECK(other_later - later < kNsPerSec / 2);

    // Outside a rank (or once it has finished): the host's clock again.
    stub::rank = false;
    CHECK(std::llabs(on_other_thread([] { return read_ns(CLOCK_MONOTONIC); }) - host_monotonic_ns()) < kNsPerSec);
}

TEST_CASE_METHOD(RankFixture, "a thread that makes calls reads the latest reply's date",
                 "[interpose][time]")
{
    stub::now = 1e6;
    const int64_t monotonic = read_ns(CLOCK_MONOTONIC);  // the simulated thread's reading
    // The simulated thread waits outside (in pthread_join) while another thread exchanges
    // messages: that thread's clock shows its replies' dates, not the wall time since the
    // simulated thread's reading (time_math.hpp, calling_thread_virtual_ns).
    auto [at_reply, after_timeout, after_empty_poll, on_a_new_thread] = on_other_thread([] {
        using s4bxi::interpose::threads_clock::replied;
        replied(s4bxi::wire::Op::PtlEQWait, PTL_OK, 1e6 + 2.5, true);
        int64_t at_reply = read_ns(CLOCK_MONOTONIC);
        // A parked poll that timed out ended in real time: it moves nothing.
        replied(s4bxi::wire::Op::PtlEQPoll, PTL_EQ_EMPTY, 1e6, true);
        int64_t after_timeout = read_ns(CLOCK_MONOTONIC);
        // A poll answered empty without waiting is a reply at the simulation's date.
        replied(s4bxi::wire::Op::PtlEQPoll, PTL_EQ_EMPTY, 1e6 + 3.0, false);
        int64_t after_empty_poll = read_ns(CLOCK_MONOTONIC);
        return std::tuple<int64_t, int64_t, int64_t, int64_t>{
            at_reply, after_timeout, after_empty_poll, on_other_thread([] { return read_ns(CLOCK_MONOTONIC); })};
    });
    // Exactly the reply's date: the thread's code between calls takes no simulated time.
    const int64_t replied = kMonotonicOffsetNs + seconds_to_ns(1e6 + 2.5);
    CHECK(at_reply == replied);
    CHECK(after_timeout == replied);
    CHECK(after_empty_poll == kMonotonicOffsetNs + seconds_to_ns(1e6 + 3.0));
    // A thread that has made no call of its own still follows the simulated thread.
    CHECK(on_a_new_thread >= monotonic);
    CHECK(on_a_new_thread - monotonic < kNsPerSec / 2);
    CHECK(read_ns(CLOCK_MONOTONIC) == monotonic);
}

// Real time (ns) a wait took, measured on the host's clock.
template <class Fn>
int64_t real_duration(Fn fn)
{
    int64_t start = host_monotonic_ns();
    fn();
    return host_monotonic_ns() - start;
}

TEST_CASE_METHOD(RankFixture, "a deadline set on one thread of a rank means the same instant on the others",
                 "[interpose][time]")
{
    stub::now = 1e6;
    constexpr int64_t kWait = 100'000'000;  // 100 ms
    // Deadlines computed on the simulated thread (simulated time), waited for on another
    // thread (in real time): what PMIx does with its finalize timer.
    timespec monotonic_deadline{}, realtime_deadline{};

    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t realtime_cond = PTHREAD_COND_INITIALIZER;
    pthread_cond_t monotonic_cond;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&monotonic_cond, &attr);
    sem_t sem;
    sem_init(&sem, 0, 0);

    struct Case {
        const char* what;
        std::function<int()> wait;  // returns the error number
        int expected;
    };
    const std::vector<Case> cases = {
        {"pthread_cond_timedwait (CLOCK_REALTIME)",
         [&] {
             pthread_mutex_lock(&mutex);
             int rc = pthread_cond_timedwait(&realtime_cond, &mutex, &realtime_deadline);
             pthread_mutex_unlock(&mutex);
             return rc;
         },
         ETIMEDOUT},
        {"pthread_cond_timedwait (CLOCK_MONOTONIC)",
         [&] {
             pthread_mutex_lock(&mutex);
             int rc = pthread_cond_timedwait(&monotonic_cond, &mutex, &monotonic_deadline);
             pthread_mutex_unlock(&mutex);
             return rc;
         },
         ETIMEDOUT},
        {"pthread_cond_clockwait",
         [&] {
             pthread_mutex_lock(&mutex);
             int rc = pthread_cond_clockwait(&realtime_cond, &mutex, CLOCK_MONOTONIC, &monotonic_deadline);
             pthread_mutex_unlock(&mutex);
             return rc;
         },
         ETIMEDOUT},
        {"sem_timedwait", [&] { return sem_timedwait(&sem, &realtime_deadline) == 0 ? 0 : errno; }, ETIMEDOUT},
        {"sem_clockwait",
         [&] { return sem_clockwait(&sem, CLOCK_MONOTONIC, &monotonic_deadline) == 0 ? 0 : errno; }, ETIMEDOUT},
        {"clock_nanosleep (TIMER_ABSTIME)",
         [&] { return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &monotonic_deadline, nullptr); }, 0},
        {"pthread_mutex_timedlock (held)",
         [&] {
             // Held by the simulated thread below.
             return pthread_mutex_timedlock(&mutex, &realtime_deadline);
         },
         ETIMEDOUT},
    };
    for (const Case& c : cases) {
        INFO(c.what);
        bool held = std::string(c.what).find("held") != std::string::npos;
        if (held) pthread_mutex_lock(&mutex);
        int rc = -1;
        monotonic_deadline = ns_to_timespec(read_ns(CLOCK_MONOTONIC) + kWait);
        realtime_deadline = ns_to_timespec(read_ns(CLOCK_REALTIME) + kWait);
        int64_t took = on_other_thread([&] { return real_duration([&] { rc = c.wait(); }); });
        if (held) pthread_mutex_unlock(&mutex);
        CHECK(rc == c.expected);
        // Not at once (the host's clock is far from the rank's), not much later either.
        CHECK(took >= kWait / 2);
        CHECK(took < 10 * kWait);
    }

    // The simulated thread's own waits: the remaining simulated time, waited in real time.
    const timespec own_deadline = ns_to_timespec(read_ns(CLOCK_MONOTONIC) + kWait);
    int rc = -1;
    int64_t took = real_duration([&] { rc = sem_clockwait(&sem, CLOCK_MONOTONIC, &own_deadline) == 0 ? 0 : errno; });
    CHECK(rc == ETIMEDOUT);
    CHECK(took >= kWait / 2);
    CHECK(took < 10 * kWait);
    CHECK(stub::sleeps.empty());  // nothing of it was simulated

    // Invalid deadlines are the real function's to report; outside ranks nothing changes.
    timespec bad{0, 2'000'000'000};
    CHECK(sem_timedwait(&sem, &bad) == -1);
    CHECK(errno == EINVAL);
    stub::rank = false;
    timespec host_deadline = ns_to_timespec(host_monotonic_ns() + kWait);
    took = real_duration([&] { rc = sem_clockwait(&sem, CLOCK_MONOTONIC, &host_deadline) == 0 ? 0 : errno; });
    CHECK(rc == ETIMEDOUT);
    CHECK(took >= kWait / 2);
    CHECK(took < 10 * kWait);

    sem_destroy(&sem);
    pthread_cond_destroy(&monotonic_cond);
    pthread_cond_destroy(&realtime_cond);
    pthread_condattr_destroy(&attr);
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
