// The bookkeeping of the rank's virtual clock: what the slot holds of the last reply, and
// how a reading of the CPU clock moves the ledger (cpu_accounting.hpp). No requests: the
// channel below which requests go and the clock above it (time/virtual_clock.hpp) both
// keep the ledger through these.
#pragma once

#include <cstdint>

namespace s4bxi::interpose {

// The simulated date of the rank's last reply, from the slot: the server also answers
// trapped sleeps on the rank's behalf and updates it.
double sim_time_at_reply();

// The virtual clock at `sim_time` after `cpu_ns - base_ns` of compute, by the CPU model.
double clock_at(double sim_time, uint64_t cpu_ns, uint64_t base_ns);

// A reading of the simulated thread's CPU clock (`cpu_ns`, taken after the host's
// CLOCK_MONOTONIC showed `wall_entry_ns`): the interposer's own CPU time since the
// previous reading leaves the simulated compute, the base of the clock (the slot's
// cpu_at_reply_ns) moving forward by as much (cpu_accounting.hpp). Returns the base.
uint64_t account_reading(uint64_t cpu_ns, int64_t wall_entry_ns);

// The simulated thread's clock after a reply given at `sim_time` (cpu_accounting.hpp).
void clock_after_reply(double sim_time, bool accounted);

// How the rank's other threads see its clock: virtual clock minus host CLOCK_MONOTONIC
// (ns), as of the simulated thread's last clock reading or reply (wire::Slot::
// threads_clock_offset_ns, shared with the server). The channel updates it at each reply,
// the virtual clock at each reading on the simulated thread. Meaningful while is_rank().
int64_t threads_clock_offset();
void set_threads_clock_offset(int64_t offset_ns);

}  // namespace s4bxi::interpose
