// Portals calls answered from the mirror of the rank's event queues and counters, in the
// rank's own process (s4bxi/mirror.hpp, DESIGN.md "Polling"): an event to take, a counter
// value that changed or reached its test. Each returns false when the call needs the
// server (nothing to read, a wait, a handle the mirror does not know, which also covers
// invalid ones), and the caller then makes its request as usual.
#pragma once

#include <portals4.h>

namespace s4bxi::interpose::mirror_reads {

bool eq_get(ptl_handle_eq_t handle, ptl_event_t* event, int* rc);
bool eq_poll(const ptl_handle_eq_t* handles, unsigned int size, ptl_event_t* event, unsigned int* which, int* rc);
bool ct_get(ptl_handle_ct_t handle, ptl_ct_event_t* event);
bool ct_wait(ptl_handle_ct_t handle, ptl_size_t test, ptl_ct_event_t* event);
bool ct_poll(const ptl_handle_ct_t* handles, const ptl_size_t* tests, unsigned int size, ptl_ct_event_t* event,
             unsigned int* which);

}  // namespace s4bxi::interpose::mirror_reads
