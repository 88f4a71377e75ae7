// The channel client: how a rank's threads reach the server over the rank's slot.
#pragma once

#include <cstdint>

#include "s4bxi/call_records.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::interpose {

// One request/reply round trip with the server. Fills request.op/seq/cpu_ns itself.
// Returns the reply (valid until the calling thread's next call). Aborts the process with a clear message
// if the server is gone.
const wire::Reply& call(wire::Op op, const void* args, uint32_t args_size);

// Posts a command that the simulated thread does not wait for (wire::PostedCommand: a
// data call, a counter update, a list append or a triggered operation whose arguments the
// caller checked as the server would): the server
// serves it, in order with the rank's requests, exactly as call() would have had it
// served. Returns false when the command must go through call() instead: another thread,
// within a request or a clock reading, an outside episode under way. The rank's clock and
// mirror are brought up to date (the server caught up with) before they are read.
bool post(wire::Op op, const void* args, uint32_t args_size);

// Waits until the server has served every command the simulated thread posted, if the
// calling thread may (may_catch_up(): the simulated thread, outside a request).
void catch_up();
bool may_catch_up();

// The mirror of the rank's queues and counters (s4bxi/mirror.hpp), if the calling thread
// may read it now: the simulated thread, outside a request and a clock reading, when no
// other thread of the rank is in a request (the server takes events from the mirror while
// it serves one). It then holds the rank's turn at its channel until release_mirror().
wire::Mirror* readable_mirror();
void release_mirror();

// The mirror, for the slots of list entry handles (wire::EntrySlot), with the reply count
// the rank sees them as of (`replies`): its last reply under the zero CPU model, any time
// under the measured one. Null when not a rank.
wire::Mirror* entry_mirror(uint64_t& replies);

// The ring of MPI call records shared with the server (s4bxi/call_records.hpp), or null
// when not a rank.
wire::CallRecordRing* call_records();

// Asks the server to drain the ring now (it is full, or holds the totals). Not counted as
// a request of the program's: it changes no clock spin and no free poll.
void drain_call_records();

// Blocks the rank for `seconds` of simulated time (one round trip to the server).
void simulated_sleep(double seconds);

// A scheduling point with no simulated cost (sched_yield).
void simulated_yield();

// PtlAbort: asks the server to interrupt the rank's blocking wait, if any. No request:
// safe from any thread and from a signal handler, while a wait holds the slot.
void request_abort();

// False once the server has closed the rank's socket.
bool server_alive();

}  // namespace s4bxi::interpose
