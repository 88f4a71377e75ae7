// Private to nic/: what the files of the NIC model share. The target side of a message
// (events, matching, flow control, consuming and unlinking entries) is in
// target_matching.cpp, event writes in event_writes.cpp; the engines (nic_model.cpp) and
// the payload capture use them.
#pragma once

#include <portals4.h>

#include <simgrid/s4u.hpp>

#include "nic/nic_model.hpp"
#include "portals/portals_state.hpp"
#include "services/rank_region.hpp"

namespace s4bxi::sim::nic_detail {

// What a message found in the target's portal table entry.
struct MatchResult {
    NetworkInterface* ni = nullptr;
    ListEntryPtr entry;  // null: no match (then `fail` says why)
    ptl_ni_fail_t fail = PTL_NI_DROPPED;
    bool disabled_now = false;  // flow control disabled the PT: match() writes PTL_EVENT_PT_DISABLED
};

// Delivery latency of an event from the calling actor's host to the rank's core.
double delivery_latency(simgrid::s4u::Host* from, const RankPortals& owner);
ptl_event_t target_event(ptl_event_kind_t kind, const Transfer& t, const ListEntry& entry, const NetworkInterface& ni);
ptl_event_t initiator_event(ptl_event_kind_t kind, const Transfer& t, uint64_t mlength);
NicTask<MatchResult> match(Nic& nic, Transfer& t);
bool consume(const ListEntryPtr& entry, Transfer& t);
void count_entry(RankPortals& owner, const ListEntry& entry, const Transfer& t);
bool comm_events_enabled(const ListEntry& entry);
bool auto_unlink(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry, bool unlink);
NicTask<> auto_unlink_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry, bool due,
                            bool over_pcie);
// The target's deferred GET / FETCH_ATOMIC event, if still due, then the AUTO_UNLINK (and
// AUTO_FREE) of the entry it consumed.
NicTask<> write_deferred_event(Nic& nic, Transfer& t);
void record_unexpected(NetworkInterface& ni, const Transfer& t, const ListEntryPtr& entry, const ptl_event_t& event);
bool deliver_payload(const Transfer& t, const RankRegion& to, uint64_t offset);
// Something for the rank to notice, visible at `visible_at` (event_writes.cpp).
void note_arrival(RankPortals& owner, double visible_at, bool event);

}  // namespace s4bxi::sim::nic_detail
