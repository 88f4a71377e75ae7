// The CPU side of Portals 4: what a rank's proxy does with each Portals request.
#pragma once

#include <simgrid/s4u.hpp>

#include "portals/portals_state.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;

RankPortals& attach_portals(RankRecord& rank, simgrid::s4u::Host* core, uint32_t nid);

// Serves one Portals request in simulated time (it may block the proxy); returns the
// PTL_* code and fills the reply's arguments.
int serve_portals(RankRecord& rank, const wire::Request& request, wire::Reply& reply);
// A call a polling or probing loop makes (a poll or a search): any other ends the loop.
bool loop_call(wire::Op op);

// The rank is in a request: the Portals calls it answered from its mirror since the
// previous one count as operations, and the events it took there leave its queues.
void learn_local_reads(RankRecord& rank);

// The rank's reply is about to be published: what its mirror says as of this reply, and
// from now on writes to the mirror are stamped as made after it.
void mark_reply(RankRecord& rank);

// PtlAbort: if the rank's proxy is in a blocking wait (PtlEQWait, PtlEQPoll, PtlCTWait,
// PtlCTPoll), the wait returns PTL_INTERRUPTED; otherwise nothing happens.
void abort_blocking_wait(RankRecord& rank);

// Wakes the rank's waits in progress, to look again at what they wait for (a park request,
// a parked poll's real-time timeout: parked_waits.hpp).
void wake_rank_waits(RankRecord& rank);

// True when a remote operation can write into the rank's memory: it has a list entry
// linked, through which a Put or an atomic lands.
bool exposes_memory(const RankRecord& rank);

// Empty polls that ended with nothing found.
extern uint64_t g_vain_polls;

// An empty poll fast-forwards until a deadline that has no simulated timeout of its own
// (docs/design.md "Polling"): the gate, which lets simulated time advance, ends it there, or at
// once when nothing else is left to happen (a stall: the ranks' own code, between their
// polls, is then the only thing that can move the run on).
// The earliest deadline of the empty polls in progress (< 0: none).
double earliest_poll_deadline();
// True when every empty poll in progress has its proxy waiting, not still on its way to
// the wait (where it may yet set a timeout of its own: an event queued, visible later).
bool polls_settled();
// Ends the empty polls whose deadline is at or before `date` (+infinity: all of them).
void end_polls(double date);

}  // namespace s4bxi::sim
