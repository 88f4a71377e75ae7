// The OpenMP runtime's workers in lockstep. GCC's runtime (libgomp) makes its threads wait
// (team barriers, locks, the pool's dock between parallel regions) with futex system calls
// it issues itself, not through libc: an interposed symbol cannot see them. Once a worker
// is to join the lockstep, a seccomp filter traps the futex calls made from libgomp's code
// (SIGSYS), and the handler answers them as the kernel would, through the lockstep: a wait
// gives the turn away until a wake-up of the same word (docs/time.md "Threads in
// lockstep"). A thread not in lockstep, or a process where the lockstep ended (a child),
// gets the real system call.
#pragma once

namespace s4bxi::interpose::openmp_futex {

// `start` is the start routine of a worker of libgomp, and libgomp's futex calls are trapped
// for the whole process (the trap is set up the first time); false for any other routine,
// or when the trap cannot be set (the worker then runs outside the lockstep, as a library
// thread).
bool runtime_thread(void* (*start)(void*));

}  // namespace s4bxi::interpose::openmp_futex
