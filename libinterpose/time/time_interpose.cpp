// libc time entry points of a rank (docs/time.md):
//
// - on its simulated thread, clocks show simulated time and sleeps are simulated;
// - on its other threads, clocks show the rank's clock as the simulated thread last saw it,
//   continued in real time, or, on a thread that makes Portals calls, the date of the
//   latest reply to such a thread (threads_clock.hpp); sleeps are real;
// - on every thread, absolute deadlines handed to blocking calls that the kernel times
//   (pthread_cond_timedwait, sem_timedwait, ...) are moved from the rank's clock to the
//   host's, keeping the time that remains.
//
// Everywhere else (launchers, daemons, a rank's children, CPU clocks) the real function
// runs: libc's, found lazily with dlsym(RTLD_NEXT), or an untrapped raw syscall while
// dlsym itself is running (it may call back into us).
#include "time/time_interpose.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "time/virtual_clock.hpp"
#include "s4bxi/time_math.hpp"
#include "time/real_symbols.hpp"
#include "time/seccomp_filter.hpp"
#include "time/threads_clock.hpp"

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

namespace s4bxi::interpose {
namespace {

using namespace s4bxi::timemath;

int64_t host_ns(clockid_t clock)
{
    timespec ts{};
    real_clock_gettime(clock, &ts);
    return timespec_to_ns(ts);
}

// What clock `kind` shows on the calling thread of a rank: the virtual clock itself on the
// simulated thread, the rank's clock continued in real time on the others.
int64_t now_ns(ClockKind kind)
{
    if (lives_in_simulated_time()) return clock_value_ns(kind, virtual_now(), virtual_epoch());
    return clock_value_at_ns(kind, threads_clock::now_ns(host_ns(CLOCK_MONOTONIC)), virtual_epoch());
}

}  // namespace

bool lives_in_simulated_time()
{
    return is_rank() && (on_simulated_thread() || on_lockstep_thread());
}

bool host_deadline(clockid_t clock, const timespec* deadline, timespec& out)
{
    if (!deadline || !is_rank() || !is_virtual_clock(clock)) return false;
    deadline = opaque(deadline);
    if (deadline->tv_nsec < 0 || deadline->tv_nsec >= kNsPerSec) return false;
    int64_t clock_now = now_ns(classify_clock(clock));
    out = ns_to_timespec(host_deadline_ns(timespec_to_ns(*deadline), clock_now, host_ns(clock)));
    return true;
}

clockid_t condvar_clock(const pthread_cond_t* cond)
{
    unsigned flags = __atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED);
    return (flags & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

namespace {

// Raw syscall result (-1 + errno) to the error-number convention of clock_nanosleep.
int as_error_number(long rc)
{
    return rc == 0 ? 0 : errno;
}

int real_nanosleep(const timespec* req, timespec* rem)
{
    if (auto fn = REAL(nanosleep, int (*)(const timespec*, timespec*))) return fn(req, rem);
    return static_cast<int>(untrapped_nanosleep(req, rem));
}

}  // namespace

int real_clock_gettime(clockid_t clock, timespec* ts)
{
    if (!on_simulated_thread() && !t_resolving)
        if (auto fn = REAL(clock_gettime, int (*)(clockid_t, timespec*))) return fn(clock, ts);
    return static_cast<int>(untrapped_clock_gettime(clock, ts));
}

}  // namespace s4bxi::interpose

using namespace s4bxi::interpose;
using namespace s4bxi::timemath;

S4BXI_EXPORT int clock_gettime(clockid_t clock, struct timespec* ts) noexcept
{
    if (is_rank() && is_virtual_clock(clock)) {
        ts = opaque(ts);
        if (!ts) {
            errno = EFAULT;
            return -1;
        }
        *ts = ns_to_timespec(now_ns(classify_clock(clock)));
        return 0;
    }
    if (auto fn = REAL(clock_gettime, int (*)(clockid_t, timespec*))) return fn(clock, ts);
    return static_cast<int>(untrapped_clock_gettime(clock, ts));
}

S4BXI_EXPORT int clock_getres(clockid_t clock, struct timespec* res) noexcept
{
    if (is_rank() && is_virtual_clock(clock)) {
        res = opaque(res);
        if (res) *res = timespec{0, 1};  // simulated time is kept to the nanosecond
        return 0;
    }
    if (auto fn = REAL(clock_getres, int (*)(clockid_t, timespec*))) return fn(clock, res);
    return static_cast<int>(syscall(SYS_clock_getres, clock, res));
}

S4BXI_EXPORT int gettimeofday(struct timeval* tv, void* tz) noexcept
{
    if (is_rank()) {
        tv = opaque(tv);
        tz = opaque(tz);
        if (tv) {
            int64_t ns = now_ns(ClockKind::Realtime);
            tv->tv_sec = static_cast<time_t>(ns / kNsPerSec);
            tv->tv_usec = static_cast<suseconds_t>((ns % kNsPerSec) / 1000);
        }
        if (tz) *static_cast<struct timezone*>(tz) = {};  // UTC, no DST, as the kernel keeps it
        return 0;
    }
    if (auto fn = REAL(gettimeofday, int (*)(timeval*, void*))) return fn(tv, tz);
    return static_cast<int>(untrapped_gettimeofday(tv, tz));
}

S4BXI_EXPORT time_t time(time_t* out) noexcept
{
    time_t seconds;
    if (is_rank()) {
        seconds = static_cast<time_t>(now_ns(ClockKind::Realtime) / kNsPerSec);
    } else if (auto fn = REAL(time, time_t (*)(time_t*))) {
        return fn(out);
    } else {
        timespec ts{};
        untrapped_clock_gettime(CLOCK_REALTIME, &ts);
        seconds = ts.tv_sec;
    }
    out = opaque(out);
    if (out) *out = seconds;
    return seconds;
}

S4BXI_EXPORT int timespec_get(struct timespec* ts, int base) noexcept
{
    if (is_rank() && base == TIME_UTC) {
        ts = opaque(ts);
        if (ts) *ts = ns_to_timespec(now_ns(ClockKind::Realtime));
        return base;
    }
    if (auto fn = REAL(timespec_get, int (*)(timespec*, int))) return fn(ts, base);
    if (base != TIME_UTC || untrapped_clock_gettime(CLOCK_REALTIME, ts) != 0) return 0;
    return base;
}

S4BXI_EXPORT int timespec_getres(struct timespec* res, int base) noexcept
{
    if (is_rank() && base == TIME_UTC) {
        res = opaque(res);
        if (res) *res = timespec{0, 1};
        return base;
    }
    if (auto fn = REAL(timespec_getres, int (*)(timespec*, int))) return fn(res, base);
    if (base != TIME_UTC || syscall(SYS_clock_getres, CLOCK_REALTIME, res) != 0) return 0;
    return base;
}

// Simulated sleeps are never interrupted by signals: they return 0 and leave *rem alone.
S4BXI_EXPORT int nanosleep(const struct timespec* req, struct timespec* rem)
{
    if (!lives_in_simulated_time()) return real_nanosleep(req, rem);
    req = opaque(req);
    if (!req) {
        errno = EFAULT;
        return -1;
    }
    if (!timespec_valid(*req)) {
        errno = EINVAL;
        return -1;
    }
    simulated_sleep(timespec_to_seconds(*req));
    return 0;
}

S4BXI_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* req, struct timespec* rem)
{
    if (!lives_in_simulated_time() || !is_virtual_sleep_clock(clock)) {
        // Another thread of a rank sleeps for real, until the instant its deadline means.
        timespec host{};
        if ((flags & TIMER_ABSTIME) && is_virtual_sleep_clock(clock) && host_deadline(clock, req, host)) req = &host;
        if (auto fn = REAL(clock_nanosleep, int (*)(clockid_t, int, const timespec*, timespec*)))
            return fn(clock, flags, req, rem);
        return as_error_number(untrapped_clock_nanosleep(clock, flags, req, rem));
    }
    req = opaque(req);
    if (!req) return EFAULT;
    if (!timespec_valid(*req)) return EINVAL;
    const bool absolute = flags & TIMER_ABSTIME;
    int64_t duration = sleep_duration_ns(absolute, *req, absolute ? now_ns(classify_clock(clock)) : 0);
    if (absolute && duration == 0) return 0;  // the deadline has passed: return at once, as the kernel does
    simulated_sleep(ns_to_seconds(duration));
    return 0;
}

S4BXI_EXPORT int usleep(useconds_t microseconds)
{
    if (!lives_in_simulated_time()) {
        if (auto fn = REAL(usleep, int (*)(useconds_t))) return fn(microseconds);
        timespec ts = ns_to_timespec(static_cast<int64_t>(microseconds) * 1000);
        return real_nanosleep(&ts, nullptr);
    }
    simulated_sleep(ns_to_seconds(static_cast<int64_t>(microseconds) * 1000));
    return 0;
}

S4BXI_EXPORT unsigned int sleep(unsigned int seconds)
{
    if (!lives_in_simulated_time()) {
        if (auto fn = REAL(sleep, unsigned int (*)(unsigned int))) return fn(seconds);
        timespec ts{static_cast<time_t>(seconds), 0}, rem{};
        if (real_nanosleep(&ts, &rem) != 0) return static_cast<unsigned int>(rem.tv_sec + (rem.tv_nsec ? 1 : 0));
        return 0;
    }
    simulated_sleep(static_cast<double>(seconds));
    return 0;
}


S4BXI_EXPORT int pthread_clockjoin_np(pthread_t thread, void** result, clockid_t clock,
                                      const struct timespec* abstime)
{
    auto fn = REAL(pthread_clockjoin_np, int (*)(pthread_t, void**, clockid_t, const timespec*));
    if (!fn) return ENOSYS;
    HOST_DEADLINE(clock, abstime);
    return fn(thread, result, clock, host);
}

S4BXI_EXPORT ssize_t mq_timedreceive(mqd_t queue, char* message, size_t size, unsigned* priority,
                                     const struct timespec* abstime)
{
    auto fn = REAL(mq_timedreceive, ssize_t (*)(mqd_t, char*, size_t, unsigned*, const timespec*));
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(queue, message, size, priority, host);
}

S4BXI_EXPORT int mq_timedsend(mqd_t queue, const char* message, size_t size, unsigned priority,
                              const struct timespec* abstime)
{
    auto fn = REAL(mq_timedsend, int (*)(mqd_t, const char*, size_t, unsigned, const timespec*));
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(queue, message, size, priority, host);
}

// C11 threads time their waits on TIME_UTC (CLOCK_REALTIME).
S4BXI_EXPORT int cnd_timedwait(cnd_t* cond, mtx_t* mutex, const struct timespec* abstime)
{
    auto fn = REAL(cnd_timedwait, int (*)(cnd_t*, mtx_t*, const timespec*));
    if (!fn) return thrd_error;
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(cond, mutex, host);
}

S4BXI_EXPORT int mtx_timedlock(mtx_t* mutex, const struct timespec* abstime)
{
    auto fn = REAL(mtx_timedlock, int (*)(mtx_t*, const timespec*));
    if (!fn) return thrd_error;
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(mutex, host);
}
