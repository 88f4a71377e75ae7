// The conservative gate (docs/design.md "The conservative gate"): simulated time may not advance while
// any rank is computing. One actor, created after every proxy, owns the doorbell.
#pragma once

#include <cstdint>

#include "run/scheduling_hooks.hpp"

namespace s4bxi::sim {

// Requests the proxies have answered: with the empty polls that found nothing
// (g_vain_polls), what tells vain polling from progress.
extern uint64_t g_requests_served;
extern uint32_t g_node_count;  // for re-attach answers

void gate_actor();

// An empty poll has begun: the gate, if parked in simulated time, wakes up to keep its
// deadline (calls/portals_engine.hpp, end_polls) and to see whether anything else is left to
// happen. A proxy that computed (the measured CPU model) before its poll may leave the
// simulation stalled as it begins.
void wake_gate_for_poll();

// A simulated event was withdrawn before its date (an E2E retransmission deadline whose
// message was acknowledged): the gate, if it sleeps until the next event with ranks
// outside the simulation, looks again, or its own wake-up becomes the next event and the
// engine runs the clock to it.
void wake_gate_for_withdrawn_event();

// Called by SimGrid when no actor can ever run again: names what every rank waits on.
void report_deadlock();

}  // namespace s4bxi::sim
