// Puts, Gets, atomics, counter updates and list appends posted to the server without waiting for its answer
// (channel/channel_client.hpp, post(); docs/time.md "Posted commands"). A posted call returns PTL_OK at
// once, so it must be one the server cannot refuse: the rank keeps what the server's checks
// look at (the NIs, MDs, portal table entries and counters the server gave it, their
// limits and options, the NIs' maps, the target nodes it has already reached, its list
// entries: entry_handles.hpp) and posts only a call that passes every check of the
// server's (Call::prepare in simkernel/calls/data_calls.cpp, Call::new_entry in
// list_calls.cpp). Any doubt, and the call waits for the server as before.
#pragma once

#include <portals4.h>

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::posted {

// What the server answered to the calls that make or end what a check looks at.
void ni_initialized(uint32_t ni, uint32_t options, const ptl_ni_limits_t& actual);
void ni_finalized(uint32_t ni);
void md_bound(uint32_t md, uint32_t ni, const ptl_md_t& description);
void md_released(uint32_t md);
void map_set(uint32_t ni, uint64_t size, const ptl_process_t* mapping);
void library_initialized(int inits);  // PtlInit calls not yet matched by a PtlFini
// A data call the server accepted: its target's node exists.
void target_reached(uint32_t md, uint64_t target);
void pt_allocated(uint32_t ni, uint32_t pt_index);
void pt_freed(uint32_t ni, uint32_t pt_index);  // before the call: it may succeed
void ct_allocated(uint32_t ct, uint32_t ni);
void ct_freed(uint32_t ct);  // before the call
// A triggered operation the server accepted, or posted; PtlCTCancelTriggered succeeded.
void triggered_registered(uint32_t trigger_ct);
void triggers_cancelled(uint32_t ct);

// Copies the payload of a PtlPut, PtlAtomic, PtlFetchAtomic or PtlSwap into `command`
// when it is small enough to be carried (wire::DataCommand): the caller's memory, now, as
// the server would read it at the call.
void carry_payload(wire::Op op, wire::DataCommand& command);

// Posts a PtlPut, PtlGet, PtlAtomic, PtlFetchAtomic or PtlSwap (`op`) the server would
// accept (command.fetch.data alone for the first three); false when it must go to the
// server as a call.
bool try_post(wire::Op op, const wire::DataCommand& command);

// Posts a PtlCTInc or PtlCTSet the server would accept; false when it must be a call.
bool try_post_counter(wire::Op op, const wire::CTArgs& args);

// Posts a triggered data operation, PtlTriggeredCTInc or PtlTriggeredCTSet the server
// would accept, and counts it; false when it must be a call (the list operations always).
bool try_post_triggered(const wire::TriggeredArgs& args);

// Posts a PtlMEAppend or PtlLEAppend (args.handle chosen by entry_handles::choose) the
// server would accept; false when it must go to the server as a call.
bool try_post_append(const wire::MEAppendArgs& args);

}  // namespace s4bxi::interpose::posted
