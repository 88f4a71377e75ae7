// Puts and Gets posted to the server without waiting for its answer (runtime.hpp, post();
// docs/time.md "Posted commands"). A posted call returns PTL_OK at once, so it must be
// one the server cannot refuse: the rank keeps what the server's checks look at (the NIs
// and MDs the server gave it, their limits and options, the NIs' maps, the target nodes
// it has already reached) and posts only a call that passes every check of the server's
// Call::prepare (simkernel/portals/data_calls.cpp). Any doubt, and the call waits for the
// server as before.
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

// Posts a PtlPut (op PtlPut) or PtlGet the server would accept; false when it must go to
// the server as a call.
bool try_post(wire::Op op, const wire::DataArgs& args);

}  // namespace s4bxi::interpose::posted
