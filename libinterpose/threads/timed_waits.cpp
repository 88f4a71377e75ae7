// The interposed calls of pthreads and semaphores that wait until a deadline, and
// sched_yield: in lockstep they hand the turn over as the untimed ones do (sync_calls.cpp);
// elsewhere the deadline a rank's thread computed on its virtual clock is moved to the
// host's clock (time/time_interpose.hpp).
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "threads/lockstep.hpp"
#include "time/real_symbols.hpp"
#include "time/time_interpose.hpp"

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

using namespace s4bxi::interpose;

S4BXI_EXPORT int sched_yield() noexcept
{
    if (on_lockstep_thread() && !lockstep::shielded()) {
        lockstep::yield();  // the next thread in the rank's order runs
        return 0;
    }
    if (lives_in_simulated_time()) {
        simulated_yield();
        return 0;
    }
    if (auto fn = REAL(sched_yield, int (*)())) return fn();
    return static_cast<int>(syscall(SYS_sched_yield));
}

// ---------------------------------------------------------------------------------------
// Blocking calls with an absolute deadline, timed by the kernel on the host's clock: the
// deadline a rank's thread computed on its (virtual) clock is moved to the host's clock,
// keeping the time that remains. The wait itself is real, on every thread.

S4BXI_EXPORT int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const struct timespec* abstime)
{
    auto fn = REAL(pthread_cond_timedwait, int (*)(pthread_cond_t*, pthread_mutex_t*, const timespec*));
    if (!fn) return ENOSYS;
    // In lockstep, it times out when no other thread of the rank can go on.
    if (on_lockstep_thread()) return lockstep::cond_wait(cond, mutex, true);
    if (!is_rank() || !opaque(cond) || !opaque(abstime)) return fn(cond, mutex, abstime);
    HOST_DEADLINE(condvar_clock(cond), abstime);
    return fn(cond, mutex, host);
}

S4BXI_EXPORT int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                                        const struct timespec* abstime)
{
    auto fn = REAL(pthread_cond_clockwait, int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*));
    if (!fn) return ENOSYS;
    HOST_DEADLINE(clock, abstime);
    return fn(cond, mutex, clock, host);
}

S4BXI_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_mutex_timedlock, int (*)(pthread_mutex_t*, const timespec*));
    if (!fn) return ENOSYS;
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(mutex, host);
}

S4BXI_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock,
                                         const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_mutex_clocklock, int (*)(pthread_mutex_t*, clockid_t, const timespec*));
    if (!fn) return ENOSYS;
    HOST_DEADLINE(clock, abstime);
    return fn(mutex, clock, host);
}

S4BXI_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* lock, const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_rwlock_timedrdlock, int (*)(pthread_rwlock_t*, const timespec*));
    if (!fn) return ENOSYS;
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, false, true);
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(lock, host);
}

S4BXI_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_rwlock_timedwrlock, int (*)(pthread_rwlock_t*, const timespec*));
    if (!fn) return ENOSYS;
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, true, true);
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(lock, host);
}

S4BXI_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clock,
                                            const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_rwlock_clockrdlock, int (*)(pthread_rwlock_t*, clockid_t, const timespec*));
    if (!fn) return ENOSYS;
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, false, true);
    HOST_DEADLINE(clock, abstime);
    return fn(lock, clock, host);
}

S4BXI_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clock,
                                            const struct timespec* abstime) noexcept
{
    auto fn = REAL(pthread_rwlock_clockwrlock, int (*)(pthread_rwlock_t*, clockid_t, const timespec*));
    if (!fn) return ENOSYS;
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, true, true);
    HOST_DEADLINE(clock, abstime);
    return fn(lock, clock, host);
}

S4BXI_EXPORT int sem_timedwait(sem_t* sem, const struct timespec* abstime)
{
    auto fn = REAL(sem_timedwait, int (*)(sem_t*, const timespec*));
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    // In lockstep, it times out when no other thread of the rank can go on.
    if (on_lockstep_thread()) return lockstep::sem_wait(sem, true);
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(sem, host);
}

S4BXI_EXPORT int sem_clockwait(sem_t* sem, clockid_t clock, const struct timespec* abstime)
{
    auto fn = REAL(sem_clockwait, int (*)(sem_t*, clockid_t, const timespec*));
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    if (on_lockstep_thread()) return lockstep::sem_wait(sem, true);
    HOST_DEADLINE(clock, abstime);
    return fn(sem, clock, host);
}

S4BXI_EXPORT int pthread_timedjoin_np(pthread_t thread, void** result, const struct timespec* abstime)
{
    auto fn = REAL(pthread_timedjoin_np, int (*)(pthread_t, void**, const timespec*));
    if (!fn) return ENOSYS;
    HOST_DEADLINE(CLOCK_REALTIME, abstime);
    return fn(thread, result, host);
}
