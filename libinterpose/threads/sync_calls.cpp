// The blocking calls of pthreads and semaphores, for threads in lockstep
// (threads/lockstep.hpp): a thread that would block gives the turn to the next thread of
// its rank instead, and has it back once what it waits for has happened. Every other thread calls libc's, at the cost of one
// test. glibc exports its mutex functions under a second name (__pthread_mutex_*), bound at
// link time: these are called from the first instant of a process, before any lookup.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "threads/lockstep.hpp"

// glibc's own, under the second name it exports them by (the first is ours).
extern "C" {
int s4bxi_libc_mutex_lock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_lock, __pthread_mutex_lock@GLIBC_2.2.5");
int s4bxi_libc_mutex_unlock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_unlock, __pthread_mutex_unlock@GLIBC_2.2.5");
int s4bxi_libc_mutex_trylock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_trylock, __pthread_mutex_trylock@GLIBC_2.2.5");
}

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

namespace lockstep = s4bxi::interpose::lockstep;
using s4bxi::interpose::lockstep_running;
using s4bxi::interpose::on_lockstep_thread;

namespace {

template <typename F>
F next_symbol(const char* name)
{
    return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The barriers a rank initialised (pthread_barrier_init): the threads each waits for, which
// glibc keeps to itself, and, for threads in lockstep, those there now. An entry lives from
// the barrier's init to its destroy.
struct Barrier {
    const void* barrier = nullptr;
    unsigned count = 0;
    unsigned arrived = 0;
};
Barrier g_barriers[256];
pthread_mutex_t g_barriers_lock = PTHREAD_MUTEX_INITIALIZER;

Barrier* find_barrier(const pthread_barrier_t* barrier)
{
    Barrier* found = nullptr;
    s4bxi_libc_mutex_lock(&g_barriers_lock);
    for (Barrier& b : g_barriers)
        if (b.barrier == barrier) found = &b;
    s4bxi_libc_mutex_unlock(&g_barriers_lock);
    return found;
}

// Initialised (count > 0) or destroyed (0).
void set_barrier(const pthread_barrier_t* barrier, unsigned count)
{
    s4bxi_libc_mutex_lock(&g_barriers_lock);
    Barrier* slot = nullptr;
    for (Barrier& b : g_barriers)
        if (b.barrier == barrier || (!slot && !b.barrier)) slot = &b;
    if (slot) *slot = Barrier{count ? barrier : nullptr, count, 0};
    s4bxi_libc_mutex_unlock(&g_barriers_lock);
}

}  // namespace

S4BXI_EXPORT int pthread_mutex_lock(pthread_mutex_t* mutex)
{
    if (on_lockstep_thread()) return lockstep::mutex_lock(mutex);
    return s4bxi_libc_mutex_lock(mutex);
}

S4BXI_EXPORT int pthread_mutex_trylock(pthread_mutex_t* mutex)
{
    int rc = s4bxi_libc_mutex_trylock(mutex);
    if (rc == 0 && on_lockstep_thread()) lockstep::mutex_taken();
    return rc;
}

S4BXI_EXPORT int pthread_mutex_unlock(pthread_mutex_t* mutex)
{
    int rc = s4bxi_libc_mutex_unlock(mutex);
    if (rc == 0 && on_lockstep_thread()) lockstep::mutex_unlocked(mutex);
    return rc;
}

S4BXI_EXPORT int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex)
{
    if (on_lockstep_thread()) return lockstep::cond_wait(cond, mutex, false);
    static const auto real = next_symbol<int (*)(pthread_cond_t*, pthread_mutex_t*)>("pthread_cond_wait");
    return real(cond, mutex);
}

S4BXI_EXPORT int pthread_cond_signal(pthread_cond_t* cond)
{
    static const auto real = next_symbol<int (*)(pthread_cond_t*)>("pthread_cond_signal");
    if (on_lockstep_thread()) lockstep::cond_signalled(cond, false);
    return real(cond);
}

S4BXI_EXPORT int pthread_cond_broadcast(pthread_cond_t* cond)
{
    static const auto real = next_symbol<int (*)(pthread_cond_t*)>("pthread_cond_broadcast");
    if (on_lockstep_thread()) lockstep::cond_signalled(cond, true);
    return real(cond);
}

S4BXI_EXPORT int pthread_barrier_init(pthread_barrier_t* barrier, const pthread_barrierattr_t* attributes,
                                      unsigned count)
{
    static const auto real =
        next_symbol<int (*)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned)>("pthread_barrier_init");
    int rc = real(barrier, attributes, count);
    if (rc == 0 && s4bxi::interpose::is_rank()) set_barrier(barrier, count);
    return rc;
}

S4BXI_EXPORT int pthread_barrier_destroy(pthread_barrier_t* barrier)
{
    static const auto real = next_symbol<int (*)(pthread_barrier_t*)>("pthread_barrier_destroy");
    if (s4bxi::interpose::is_rank()) set_barrier(barrier, 0);
    return real(barrier);
}

S4BXI_EXPORT int pthread_barrier_wait(pthread_barrier_t* barrier)
{
    if (on_lockstep_thread())
        if (Barrier* state = find_barrier(barrier))
            return lockstep::barrier_wait(barrier, state->count, state->arrived);
    static const auto real = next_symbol<int (*)(pthread_barrier_t*)>("pthread_barrier_wait");
    return real(barrier);
}

int lockstep::sem_wait(sem_t* sem, bool timed)
{
    static const auto real_trywait = next_symbol<int (*)(sem_t*)>("sem_trywait");
    int rc = take_when_released(sem, timed,
                                [](void* object) { return real_trywait(static_cast<sem_t*>(object)) == 0 ? 0 : errno; });
    if (rc == 0) return 0;
    errno = rc;
    return -1;
}

int lockstep::rwlock_lock(pthread_rwlock_t* lock, bool write, bool timed)
{
    using Try = int (*)(pthread_rwlock_t*);
    static const auto try_read = next_symbol<Try>("pthread_rwlock_tryrdlock");
    static const auto try_write = next_symbol<Try>("pthread_rwlock_trywrlock");
    auto read = [](void* object) { return try_read(static_cast<pthread_rwlock_t*>(object)); };
    auto written = [](void* object) { return try_write(static_cast<pthread_rwlock_t*>(object)); };
    return write ? take_when_released(lock, timed, written) : take_when_released(lock, timed, read);
}

S4BXI_EXPORT int sem_wait(sem_t* sem)
{
    if (on_lockstep_thread()) return lockstep::sem_wait(sem, false);
    static const auto real = next_symbol<int (*)(sem_t*)>("sem_wait");
    return real(sem);
}

S4BXI_EXPORT int sem_post(sem_t* sem)
{
    static const auto real = next_symbol<int (*)(sem_t*)>("sem_post");
    int rc = real(sem);
    if (rc == 0 && lockstep_running()) lockstep::released(sem);
    return rc;
}

S4BXI_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t* lock)
{
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, false, false);
    static const auto real = next_symbol<int (*)(pthread_rwlock_t*)>("pthread_rwlock_rdlock");
    return real(lock);
}

S4BXI_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t* lock)
{
    if (on_lockstep_thread()) return lockstep::rwlock_lock(lock, true, false);
    static const auto real = next_symbol<int (*)(pthread_rwlock_t*)>("pthread_rwlock_wrlock");
    return real(lock);
}

S4BXI_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* lock)
{
    static const auto real = next_symbol<int (*)(pthread_rwlock_t*)>("pthread_rwlock_unlock");
    int rc = real(lock);
    if (rc == 0 && lockstep_running()) lockstep::released(lock);
    return rc;
}

S4BXI_EXPORT int pthread_join(pthread_t thread, void** result)
{
    if (on_lockstep_thread()) return lockstep::join(thread, result);
    static const auto real = next_symbol<int (*)(pthread_t, void**)>("pthread_join");
    return real(thread, result);
}

S4BXI_EXPORT [[noreturn]] void pthread_exit(void* result)
{
    static const auto real = next_symbol<void (*)(void*)>("pthread_exit");
    lockstep::thread_exits();
    real(result);
    __builtin_unreachable();
}
