// Whether an event a poll hands the rank is work for it, for the fast-forward of empty
// polls (docs/model.md, "Polling"): the server's polls and the mirror's local reads agree.
#pragma once

#include <portals4.h>

namespace s4bxi {

// A PtlMESearch that found nothing says so with a PTL_EVENT_SEARCH of PTL_NI_NO_MATCH: the
// rank's own question, answered "still nothing". A loop of searches and polls (MPI_Iprobe
// until a message comes) is waiting, like a loop of empty polls: taking that event must not
// reset the growth of the fast-forward steps, or a long wait costs a probe per step.
inline bool is_work(const ptl_event_t& event)
{
    return !(event.type == PTL_EVENT_SEARCH && event.ni_fail_type == PTL_NI_NO_MATCH);
}

}  // namespace s4bxi
