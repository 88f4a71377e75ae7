// The clock of a rank's threads other than the simulated one (docs/time.md "On which
// threads").
//
// Until a thread makes Portals calls of its own, it continues the simulated thread's last
// reading in real time (the slot's threads_clock_offset_ns). From then on it reads the
// date of the latest reply to any of the rank's calling threads (other than the simulated
// one), real time counting only past timemath::kCallingThreadGraceNs without a reply. A
// thread that calls MPI while the simulated thread waits outside the simulation (in
// pthread_join) then times its messages in simulated time, not in the wall time of the
// simulation.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::threads_clock {

// The server replied to this thread (not the simulated one) at simulated `sim_time`, with
// return code `rc` for operation `op`; `parked`: the reply ended a wait the server parked.
// A parked poll that timed out moves nothing: it ended in real time, at a date the
// simulation may not have moved to.
void replied(wire::Op op, int32_t rc, double sim_time, bool parked);

// The calling thread's virtual CLOCK_MONOTONIC (ns) when the host's shows `host_ns`.
int64_t now_ns(int64_t host_ns);

}  // namespace s4bxi::interpose::threads_clock
