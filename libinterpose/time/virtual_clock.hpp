// The rank's virtual clock.
#pragma once

#include <cstdint>

namespace s4bxi::interpose {

// The rank's virtual clock, in seconds since simulated time 0:
//   sim_time_at_last_reply + cpu_time_since_reply * cpu_factor   (measured CPU model)
//   sim_time_at_last_reply                                      (zero CPU model)
// Served locally, without a round trip. On the simulated thread only; it also updates
// threads_clock_offset() (rank/clock_ledger.hpp).
double virtual_now();

// The rank's virtual clock as it stands, with no effect on the run: no accounting of the
// reading, no clock-spin count, no catching up after a wait outside (virtual_now() does
// those). On the simulated thread only. For observation (libinterpose/mpi/).
double clock_peek();

// The simulated thread enters the MPI library, whose code a model charges (`charge_ns` of
// the thread's CPU time, scaled by cpu_factor as compute is) instead of its measured CPU
// time: the virtual clock moves by the charge at once and then stands still until
// leave_library() (docs/time.md "The MPI library's code"). `wall_entry_ns`: the host's
// CLOCK_MONOTONIC as the application called in (what runs after it is not the
// application's). Sets `clock_at_entry` to the clock before the charge. Returns false, and
// changes nothing, where no charge applies: the zero CPU model, another thread, a nested call.
bool enter_library(uint64_t charge_ns, int64_t wall_entry_ns, double* clock_at_entry);
// Leaves it: returns the clock, which runs again from here.
double leave_library();

}  // namespace s4bxi::interpose
