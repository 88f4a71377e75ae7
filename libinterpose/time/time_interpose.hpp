// Time interposition (time_interpose.cpp): the libc time entry points a rank calls are
// answered with simulated time on its simulated thread. Inside libportals.so, a plain call
// to clock_gettime() resolves to our own interposed definition: code of the library that
// needs the host's time must use the functions below instead.
#pragma once

#include <time.h>

namespace s4bxi::interpose {

// The host's clocks, never simulated and never caught by the seccomp trap, on any thread
// (libc's vDSO path off the simulated thread; an untrapped raw syscall on it, since a vDSO
// that falls back to the syscall would be trapped). Same conventions as clock_gettime(2).
int real_clock_gettime(clockid_t clock, timespec* ts);

}  // namespace s4bxi::interpose
