// What the host did to the run, for its summary: peak resident sets (the server's own and
// each rank's), the host's load, the times a rank's thread was taken off its core.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace s4bxi::sim {

// The largest resident set of the server process so far, in bytes.
uint64_t server_peak_resident_bytes();
// The largest resident set of a live process (VmHWM), in bytes; 0 if it cannot be read.
uint64_t process_peak_resident_bytes(pid_t pid);
// The times the kernel took thread `tid` of process `pid` off its core against its will
// (nonvoluntary_ctxt_switches): the host's other work; 0 if it cannot be read.
uint64_t thread_involuntary_switches(pid_t pid, pid_t tid);
// The host's load averages over 1, 5 and 15 minutes (/proc/loadavg); zeros if unreadable.
struct HostLoad {
    double one = 0, five = 0, fifteen = 0;
};
HostLoad host_load();

}  // namespace s4bxi::sim
