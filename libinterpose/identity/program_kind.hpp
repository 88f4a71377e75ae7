// What kind of program the rank runs, as far as the server needs to know at registration.
#pragma once

namespace s4bxi::interpose {

// True when the program is an OpenSHMEM program: it has `shmem_init`, in a shared library
// loaded with it or linked into the executable (Sandia OpenSHMEM builds a static libsma by
// default). Such a program may wait on its own memory (docs/time.md "Waiting on memory").
bool program_is_openshmem();

}  // namespace s4bxi::interpose
