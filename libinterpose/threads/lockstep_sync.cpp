// The blocking calls of a thread in lockstep (mutexes, condition variables, barriers,
// joins, semaphores, read-write locks, the OpenMP runtime's futex waits, yields): instead
// of blocking in the kernel, they hand the turn to the next thread that can go on.
// sync_calls.cpp and timed_waits.cpp, the interposed calls, come here for threads in
// lockstep.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "threads/lockstep.hpp"
#include "threads/lockstep_members.hpp"

// glibc's own, under the second name it exports them by (the first is ours).
extern "C" {
int s4bxi_libc_mutex_trylock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_trylock, __pthread_mutex_trylock@GLIBC_2.2.5");
int s4bxi_libc_mutex_unlock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_unlock, __pthread_mutex_unlock@GLIBC_2.2.5");
}

namespace s4bxi::interpose::lockstep {

int mutex_lock(pthread_mutex_t* mutex)
{
    Guard guard;
    Member& me = g_members[t_lockstep_index];
    while (true) {
        int rc = s4bxi_libc_mutex_trylock(mutex);
        if (rc == 0) ++me.mutexes_held;
        if (rc != EBUSY) return rc;
        me.state = State::OnMutex;
        me.object = mutex;
        pass_turn(t_lockstep_index);
    }
}

void mutex_taken()
{
    ++g_members[t_lockstep_index].mutexes_held;
}

void mutex_unlocked(pthread_mutex_t* mutex)
{
    Guard guard;
    Member& me = g_members[t_lockstep_index];
    if (me.mutexes_held > 0 && --me.mutexes_held == 0) me.budgets_holding = 0;
    for (int i = 0; i < g_count; ++i)
        if (g_members[i].state == State::OnMutex && g_members[i].object == mutex) {
            g_members[i].state = State::Runnable;
            progressed();
        }
}

int cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex, bool timed)
{
    Guard guard;
    s4bxi_libc_mutex_unlock(mutex);
    mutex_unlocked(mutex);
    bool signalled = wait_on(State::OnCond, cond, timed);
    int rc = mutex_lock(mutex);
    if (rc != 0) return rc;
    return signalled ? 0 : ETIMEDOUT;
}

void cond_signalled(pthread_cond_t* cond, bool all)
{
    Guard guard;
    wake_waiters(State::OnCond, cond, all ? g_count : 1);
}

int barrier_wait(pthread_barrier_t* barrier, unsigned count, unsigned& arrived)
{
    Guard guard;
    if (++arrived == count) {
        arrived = 0;
        for (int i = 0; i < g_count; ++i)
            if (g_members[i].state == State::OnBarrier && g_members[i].object == barrier)
                g_members[i].state = State::Runnable;
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    Member& me = g_members[t_lockstep_index];
    me.state = State::OnBarrier;
    me.object = barrier;
    pass_turn(t_lockstep_index);
    return 0;
}

int join(pthread_t thread, void** result)
{
    Guard guard;
    using Join = int (*)(pthread_t, void**);
    static const auto real_join = reinterpret_cast<Join>(dlsym(RTLD_NEXT, "pthread_join"));
    for (int i = 1; i < g_count; ++i) {
        if (g_members[i].state == State::Free || !pthread_equal(g_members[i].thread, thread)) continue;
        Member& me = g_members[t_lockstep_index];
        while (g_members[i].state != State::Exited) {
            me.state = State::OnJoin;
            me.target = i;
            pass_turn(t_lockstep_index);
        }
        // Ended for the lockstep; the kernel thread is on its way out. Forget it, so that a
        // later thread with the same pthread_t is not taken for it.
        g_members[i].thread = pthread_t{};
        break;
    }
    int rc = real_join(thread, result);
    end_if_alone();
    return rc;
}

long futex_wait(const uint32_t* word, uint32_t expected, bool timed)
{
    Guard guard;
    // The threads in lockstep run one at a time: no other can change the word meanwhile.
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return -EAGAIN;
    return wait_on(State::OnFutex, word, timed) ? 0 : -ETIMEDOUT;
}

int futex_wake(const uint32_t* word, int count)
{
    Guard guard;
    return wake_waiters(State::OnFutex, word, count);
}

int take_when_released(void* object, bool timed, int (*try_take)(void*))
{
    Guard guard;
    while (true) {
        int rc = try_take(object);
        if (rc != EAGAIN && rc != EBUSY) return rc;
        if (!wait_on(State::OnRelease, object, timed)) return ETIMEDOUT;
    }
}

void released(const void* object)
{
    bool holder = on_lockstep_thread() && !t_in_lockstep &&
                  static_cast<int>(g_turn.load(std::memory_order_acquire)) == t_lockstep_index;
    if (!holder) {
        g_foreign_releases.store(true, std::memory_order_release);
        return;
    }
    Guard guard;
    // Every waiter tries again, in the rank's order: the first takes what it can.
    if (wake_waiters(State::OnRelease, object, g_count) > 0) progressed();
}

void yield()
{
    Guard guard;
    pass_turn(t_lockstep_index);
}

void thread_exits()
{
    Guard guard;
    if (!on_lockstep_thread() || t_lockstep_index == 0) return;
    int me = t_lockstep_index;
    g_members[me].state = State::Exited;
    for (int i = 0; i < g_count; ++i)
        if (g_members[i].state == State::OnJoin && g_members[i].target == me) g_members[i].state = State::Runnable;
    pass_turn(me, true);  // a request it makes on the way is still a lockstep one
    t_lockstep_index = -1;
}

}  // namespace s4bxi::interpose::lockstep
