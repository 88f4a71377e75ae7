// Blocking waits that let go of the rank's slot (docs/time.md "On which threads"). A rank
// has one slot, which its threads take in turns. A blocking wait (PtlCTWait, PtlEQWait,
// PtlCTPoll and PtlEQPoll with a timeout) is parked: another thread's at once, the
// simulated thread's while another thread waits for the turn (wire::Slot::turn_waiters).
// Parking answers the request with wire::kParkedRc, so the slot is free; the proxy actor
// goes on waiting in simulated time as the wait's own actor, and a new proxy serves the
// rank's next requests. The wait's result goes to the waiting thread's own
// wire::ParkedWait, in the rank's memory: any number of threads may wait.
#pragma once

#include <cstdint>

#include "run/registry.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

// A request whose wait may be parked.
bool parkable(const wire::Request& request);

// The serving proxy's request is a parkable wait about to block: parks it if it must
// (another thread's, or a thread waits for the turn). Called by the
// Portals engine inside the wait.
void park_if_needed(RankRecord& rank, const wire::Request& request, ParkTicket& ticket);

// The parked wait has ended: its result goes to the waiting thread. For the simulated
// thread's wait, the rank computes again.
void finish_parked_wait(RankRecord& rank, const wire::Request& request, const wire::Reply& reply,
                        const ParkTicket& ticket);

// The gate's look at a rank: threads waiting for the turn, real-time timeouts of its parked
// polls; returns true when a thread of the rank outside the simulation may still make
// a call the simulation waits for (a parked timed poll will end by itself; a thread waits
// for the turn; another thread that made Portals calls is alive outside a wait): time then
// does not wait for the rank, but the run is not a deadlock either.
bool look_at_parked_waits(RankRecord& rank, double wall_now);

// A thread of the rank the server has not heard from, and that will run again by itself:
// running or runnable (a thread the program has just started, on its way to its first
// Portals call), or asleep in nanosleep. With every rank waiting in the simulation and
// nothing under way, such a thread may still make the call a wait waits for: no deadlock
// yet. The simulated thread, the threads whose calls the server has served, and the
// interposer's delivery thread are not looked at; threads asleep in anything else
// (a runtime's progress thread in epoll_wait) count for nothing.
bool unknown_thread_may_call(const RankRecord& rank);

// The rank's process is gone: the actors of its parked waits go too.
void kill_parked_waits(RankRecord& rank);

}  // namespace s4bxi::sim
