// What the server's machine did to the run, for its summary: the server's peak resident
// set, the host's load. The ranks' own figures come from the ProcessAccess of their
// machine (process_access.hpp).
#pragma once

#include <cstdint>

namespace s4bxi::sim {

// The largest resident set of the server process so far, in bytes.
uint64_t server_peak_resident_bytes();
// The host's load averages over 1, 5 and 15 minutes (/proc/loadavg); zeros if unreadable.
struct HostLoad {
    double one = 0, five = 0, fifteen = 0;
};
HostLoad host_load();

}  // namespace s4bxi::sim
