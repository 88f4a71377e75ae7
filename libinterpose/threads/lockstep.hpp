// Lockstep threads: the threads of a rank (by default an OpenSHMEM one; --lockstep), under
// the zero CPU model, run one at a time, and hand the turn to each other in an order of the
// rank's own, so that their Portals calls reach the server in the same order in every run
// (docs/time.md "Threads in lockstep"). The thread that has the turn runs until it blocks:
// in a Portals wait (which the server parks), on a mutex, a condition variable, a barrier,
// a semaphore, a read-write lock, a join, in the OpenMP runtime, or it yields or ends.
// The turn then goes to the next thread, in the order they were created, that can go on;
// a thread in a Portals wait can once a reply of the server has counted its wait as ended.
// When none can, the rank asks the server to wait until one of their waits ends
// (wire::Op::LockstepIdle), and only then does simulated time run without it: while one
// of its threads runs, the rank holds simulated time, as a computing rank does.
#pragma once

#include <pthread.h>
#include <semaphore.h>
#include <time.h>

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::lockstep {

// While one lives, the calling thread is in the interposer's code (a request, a wait for
// the server): the watchdog does not take the turn from it there.
class Shield {
public:
    Shield();
    ~Shield();
    Shield(const Shield&) = delete;
    Shield& operator=(const Shield&) = delete;

private:
    bool outer_;
};

// Whether the calling thread is one of the rank's threads in lockstep (it has the turn
// whenever it runs code of the program's), and whether the lockstep runs: the rank's state
// (rank/rank_state.hpp, on_lockstep_thread() and lockstep_running()), which this file writes.

// A request of the channel's, as a Shield (channel/channel_hooks.hpp): returns whether it
// is the outermost, which unshield_request() is given back.
bool shield_request();
void unshield_request(bool outer);

// The calling thread runs the interposer's own code (a Shield lives): its yields and locks
// are the interposer's, not the program's.
bool shielded();


// pthread_create: the start routine and argument to create the thread with. A thread of
// the program's own code (its start routine is in the executable) or an OpenMP runtime's
// worker (threads/openmp_futex.hpp), started by a thread in lockstep or by the simulated
// thread of a rank the server lets run in lockstep (threads_lockstep(): by default an
// OpenSHMEM rank under the zero CPU model; --lockstep), joins the lockstep: it waits for
// the turn before it runs. Others are left alone.
struct Start {
    void* (*start)(void*);
    void* argument;
    int index;  // its place in the rank's order, or -1
};
Start before_create(void* (*start)(void*), void* argument);
void after_create(const Start& start, int rc, pthread_t thread);

// A reply of the server to a thread in lockstep: how many of the rank's lockstep waits it
// says have ended, how many writes have landed in its memory; the date it was given at,
// which the rank holds from then on (the slot's clock, which its threads read).
void learn(const wire::Reply& reply, wire::Slot& slot);

// This thread's Portals wait was parked: it gives the turn away, and has it back once its
// result is in `wait` and a reply has counted it.
void wait_parked(wire::ParkedWait& wait);

// The blocking calls of pthreads, for a thread in lockstep (threads/sync_calls.cpp).
int mutex_lock(pthread_mutex_t* mutex);
void mutex_taken();  // a pthread_mutex_trylock that took it
void mutex_unlocked(pthread_mutex_t* mutex);
int cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex, bool timed);
void cond_signalled(pthread_cond_t* cond, bool all);
// `count`: the threads the barrier waits for; `arrived`: those there now (sync_calls.cpp
// keeps both, by barrier).
int barrier_wait(pthread_barrier_t* barrier, unsigned count, unsigned& arrived);
int join(pthread_t thread, void** result);
// The OpenMP runtime's futex calls (threads/openmp_futex.cpp), as the kernel answers them:
// futex_wait returns 0, -EAGAIN (the word is not `expected`) or -ETIMEDOUT (a timed wait,
// when no thread of the rank can go on); futex_wake, the threads it woke.
long futex_wait(const uint32_t* word, uint32_t expected, bool timed);
int futex_wake(const uint32_t* word, int count);
// Semaphores and read-write locks: a thread in lockstep that finds `object` taken
// (`try_take(object)` returns EAGAIN or EBUSY) waits for a thread to release it instead of
// blocking in the kernel, then tries again. Returns try_take's 0 or error, or ETIMEDOUT
// when `timed` and no thread of the rank can go on. `released`: after every successful
// sem_post or read-write unlock of the rank's, from any thread.
int take_when_released(void* object, bool timed, int (*try_take)(void*));
void released(const void* object);
// sem_wait and its timed forms for a thread in lockstep (threads/sync_calls.cpp): 0, or -1
// and errno.
int sem_wait(sem_t* sem, bool timed);
// pthread_rwlock_{rd,wr}lock and their timed forms (threads/sync_calls.cpp).
int rwlock_lock(pthread_rwlock_t* lock, bool write, bool timed);
void yield();
void thread_exits();

}  // namespace s4bxi::interpose::lockstep
