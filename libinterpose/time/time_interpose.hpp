// Time interposition (time_interpose.cpp): the libc time entry points a rank calls are
// answered with simulated time on its simulated thread. Inside libportals.so, a plain call
// to clock_gettime() resolves to our own interposed definition: code of the library that
// needs the host's time must use the functions below instead.
#pragma once

#include <pthread.h>
#include <time.h>

#include "time/real_symbols.hpp"

namespace s4bxi::interpose {

// The host's clocks, never simulated and never caught by the seccomp trap, on any thread
// (libc's vDSO path off the simulated thread; an untrapped raw syscall on it, since a vDSO
// that falls back to the syscall would be trapped). Same conventions as clock_gettime(2).
int real_clock_gettime(clockid_t clock, timespec* ts);

// The calling thread lives in simulated time: the rank's simulated thread, or any of its
// threads in lockstep (threads/lockstep.hpp), whose sleeps are simulated too.
bool lives_in_simulated_time();

// An absolute deadline on `clock` as the calling thread sees it, moved to the host's
// `clock` (same time remaining) into `out`. False (leave it alone) outside ranks, on
// clocks that are not virtual, and for an invalid deadline (the real function reports it).
bool host_deadline(clockid_t clock, const timespec* deadline, timespec& out);

// The clock a condition variable times its waits on (pthread_condattr_setclock): bit 1 of
// glibc's __wrefs (nptl's __PTHREAD_COND_CLOCK_MONOTONIC_MASK), fixed at initialisation.
clockid_t condvar_clock(const pthread_cond_t* cond);

}  // namespace s4bxi::interpose

// Declares `host`: `abstime` moved to the host's clock, or `abstime` itself where it
// stays (host_deadline()).
#define HOST_DEADLINE(clock, abstime) \
    timespec host_value_{};            \
    const timespec* host = host_deadline((clock), opaque(abstime), host_value_) ? &host_value_ : (abstime)
