// Peak resident sets, for the run summary: the server's own and each rank's.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace s4bxi::sim {

// The largest resident set of the server process so far, in bytes.
uint64_t server_peak_resident_bytes();
// The largest resident set of a live process (VmHWM), in bytes; 0 if it cannot be read.
uint64_t process_peak_resident_bytes(pid_t pid);

}  // namespace s4bxi::sim
