// The clock of a rank's threads other than the simulated one (docs/time.md "Threads").
//
// They continue a reading of the rank's clock in real time. The anchor is the simulated
// thread's last reading (the slot's threads_clock_offset_ns) until the thread makes Portals
// calls of its own: from then on it is the date of the latest reply to any thread of the
// rank that makes calls (other than the simulated one). A thread that
// calls MPI while the simulated thread waits outside the simulation (in pthread_join)
// then times its messages in simulated time, not in the wall time of the simulation.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::threads_clock {

// The server replied to this thread (not the simulated one) at simulated `sim_time`,
// with `reply`'s return code for operation `op`. A wait that timed out keeps the anchor:
// it ended in real time, at a date the simulation may not have moved to.
void replied(wire::Op op, int32_t rc, double sim_time);

// The calling thread's virtual CLOCK_MONOTONIC (ns) when the host's shows `host_ns`.
int64_t now_ns(int64_t host_ns);

}  // namespace s4bxi::interpose::threads_clock
