// Portals calls answered from the mirror of the rank's event queues and counters, in the
// rank's own process (s4bxi/mirror.hpp, docs/design.md "Polling"): an event to take, a counter
// value that changed or reached its test, an empty poll while work waits elsewhere or right
// after a poll that found an event. Each returns false when the call needs the
// server (nothing to read, a wait, a handle the mirror does not know, which also covers
// invalid ones), and the caller then makes its request as usual.
#pragma once

#include <portals4.h>

namespace s4bxi::interpose::mirror_reads {

// `polling`: a call that does not wait (PtlEQGet, PtlEQPoll with a zero timeout). Without
// an event, it still returns PTL_EQ_EMPTY at once while an event the rank has not looked
// at yet is visible in another queue, as the server would.
bool eq_get(ptl_handle_eq_t handle, bool polling, ptl_event_t* event, int* rc);
bool eq_poll(const ptl_handle_eq_t* handles, unsigned int size, bool polling, ptl_event_t* event, unsigned int* which,
             int* rc);
// A poll returned `event` (read locally or from the server): an empty poll right after it,
// with no other call in between, returns at once (docs/design.md "Polling").
void after_event(const ptl_event_t& event);

// The server made the rank's last search wait out a polling step (a probing loop,
// Call::me_search): the empty poll after its SEARCH event is free.
void search_took_step();

bool ct_get(ptl_handle_ct_t handle, ptl_ct_event_t* event);
bool ct_wait(ptl_handle_ct_t handle, ptl_size_t test, ptl_ct_event_t* event);
bool ct_poll(const ptl_handle_ct_t* handles, const ptl_size_t* tests, unsigned int size, ptl_ct_event_t* event,
             unsigned int* which);

}  // namespace s4bxi::interpose::mirror_reads
