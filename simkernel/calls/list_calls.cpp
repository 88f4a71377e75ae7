// The calls on list entries (PtlMEAppend, PtlMESearch, PtlMEUnlink and their LE forms) and
// the unexpected headers an appended entry or a search claims.
#include <fmt/format.h>

#include "calls/call.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(s4bxi_portals);

namespace s4bxi::sim {
namespace engine {

namespace {

EntryCriteria criteria_of(const wire::MEAppendArgs& a, const NetworkInterface& n)
{
    EntryCriteria c;
    c.matching = !a.is_le;
    c.options = a.options;
    c.length = a.length;
    c.match_bits = a.match_bits;
    c.ignore_bits = a.ignore_bits;
    ptl_process_t match_id;
    std::memcpy(&match_id, &a.match_id, sizeof match_id);
    c.logical = n.options & PTL_NI_LOGICAL;
    c.match_nid = match_id.phys.nid;
    c.match_pid = match_id.phys.pid;
    c.match_rank = match_id.rank;
    return c;
}


// Unexpected headers taken off a list, and the overflow entries that gave them.
struct TakenHeaders {
    std::vector<ptl_event_t> events;
    std::vector<ListEntryPtr> released;
};

// Unexpected headers matching `entry`, as the events they will become (with `user_ptr`):
// overflow events when `claim`, and then they leave the list; SEARCH events without
// `claim` (PtlMESearch with PTL_SEARCH_ONLY), and they stay. A use-once entry takes only
// the first; a persistent one gets an event for every match, searches included. Nothing
// here waits in simulated time.
TakenHeaders take_unexpected(NetworkInterface& ni, PortalTableEntry& pt, const ListEntry& entry, uint64_t user_ptr,
                             bool claim)
{
    TakenHeaders taken;
    for (auto it = pt.unexpected.begin(); it != pt.unexpected.end();) {
        if (!criteria_match(entry.criteria, it->source)) {
            ++it;
            continue;
        }
        ptl_event_t event = it->event;
        event.user_ptr = reinterpret_cast<void*>(user_ptr);
        if (!claim) event.type = PTL_EVENT_SEARCH;
        taken.events.push_back(event);
        if (claim) {
            if (it->from) {
                --it->from->headers;
                taken.released.push_back(it->from);
            }
            it = pt.unexpected.erase(it);
            --ni.unexpected_total;
        } else {
            ++it;
        }
        if (entry.criteria.options & PTL_ME_USE_ONCE) break;
    }
    return taken;
}

// Counts and writes the events of headers taken by take_unexpected, then frees the
// overflow entries that gave their last header. Writing an event waits in simulated
// time, during which the NIC may deliver other messages.
void report_unexpected(Nic& nic, RankPortals& owner, const TakenHeaders& taken, const ListEntry& entry, uint32_t eq,
                       bool claim)
{
    NetworkInterface& owner_ni = owner.nis[entry.ni];
    for (const ptl_event_t& event : taken.events) {
        if (!claim) {
            write_event(nic, owner, eq, event, switches_now().pci_commands).run_in_actor();
            continue;
        }
        if ((entry.criteria.options & PTL_ME_EVENT_CT_OVERFLOW) && entry.ct != PTL_CT_NONE)
            count_completion(owner, entry.ct, entry.criteria.options & PTL_ME_EVENT_CT_BYTES, event.mlength,
                             event.ni_fail_type);
        if (!(entry.criteria.options & PTL_ME_EVENT_OVER_DISABLE))
            write_event(nic, owner, eq, event, switches_now().pci_commands).run_in_actor();
    }
    for (const ListEntryPtr& from : taken.released)
        auto_free_if_due(nic, owner, owner_ni, *from, switches_now().pci_commands).run_in_actor();
}

// Links a new entry at this instant: a priority entry first claims the unexpected
// headers it matches; a use-once entry consumed that way is never linked. Claiming and
// linking happen at one instant: a message arriving while the claimed headers' events are
// written must find the entry linked, not fall into the overflow list behind the search
// (a header lost that way left coll/portals4's barrier waiting forever). Nothing here
// waits; report_link() writes the events afterwards.
struct Linked {
    TakenHeaders claimed;
    bool consumed = false;
};

Linked claim_and_link(RankPortals& owner, const ListEntryPtr& entry)
{
    NetworkInterface& ni = owner.nis[entry->ni];
    PortalTableEntry& pt = ni.table[entry->pt_index];
    Linked linked;
    if (entry->list == PTL_PRIORITY_LIST) linked.claimed = take_unexpected(ni, pt, *entry, entry->user_ptr, true);
    linked.consumed = !linked.claimed.events.empty() && (entry->criteria.options & PTL_ME_USE_ONCE);
    if (linked.consumed) {
        entry->linked = false;
        release_handle(owner, entry);
    } else {
        entry->linked = true;
        (entry->list == PTL_PRIORITY_LIST ? pt.priority : pt.overflow).push_back(entry);
    }
    return linked;
}

// The events of a link: the claimed headers' overflow events, then LINK, or, for a
// use-once entry consumed at once, the specification's PTL_EVENT_AUTO_UNLINK. Waits in
// simulated time.
void report_link(Nic& nic, RankPortals& owner, const ListEntryPtr& entry, const Linked& linked)
{
    NetworkInterface& n = owner.nis[entry->ni];
    uint32_t options = entry->criteria.options;
    report_unexpected(nic, owner, linked.claimed, *entry, n.table[entry->pt_index].eq, true);
    if (linked.consumed) {
        if (!(options & (PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE)))
            write_entry_event(nic, owner, n, *entry, PTL_EVENT_AUTO_UNLINK, switches_now().pci_commands).run_in_actor();
        return;
    }
    if (!(options & PTL_ME_EVENT_LINK_DISABLE))
        write_entry_event(nic, owner, n, *entry, PTL_EVENT_LINK, switches_now().pci_commands).run_in_actor();
}

}  // namespace

// The trigger of a PtlTriggeredMEAppend fired: the entry is linked at this instant, and
// its events are written by an actor of the NIC (triggers fire inside other operations,
// which must not wait for them).
void append_triggered(RankPortals& owner, const ListEntryPtr& entry)
{
    if (!entry->pending_append) return;  // unlinked meanwhile
    entry->pending_append = false;
    Linked linked = claim_and_link(owner, entry);
    Nic& nic = nic_model().nic(owner.nid);
    RankPortals* rank = &owner;
    sg4::Actor::create("triggered-append", nic.hosts().nic,
                       [&nic, rank, entry, linked] { report_link(nic, *rank, entry, linked); });
}

// The handle the rank chose for a new entry (wire::EntrySlot) is one it may choose, and
// free: otherwise the rank and the server disagree on its entries, which is a fault of
// s4bxi's, reported as such.
bool Call::chosen_handle_free(uint32_t handle, HandleKind kind) const
{
    uint32_t index = handle_index(handle);
    bool free = handle_kind(handle) == kind && p_.mirror && index < wire::kMirroredEntries &&
                (index >= p_.entries.size() || !p_.entries[index]);
    if (!free) XBT_WARN("rank %d: internal error: the rank chose list entry handle %#x, which is not free", r_.rank, handle);
    return free;
}

// The index of an entry whose handle the rank left to the server: the lowest free one past
// the slots the rank chooses from (all of them without a mirror).
uint32_t Call::server_entry_index() const
{
    uint32_t index = p_.mirror ? wire::kMirroredEntries : 0;
    while (index < p_.entries.size() && p_.entries[index]) ++index;
    return index;
}

// Checks an entry's arguments and creates it, with its handle, not linked yet.
int Call::new_entry(const wire::MEAppendArgs& a, ListEntryPtr& out)
{
    NetworkInterface* n = ni(a.ni);
    if (!n || n->matching() == static_cast<bool>(a.is_le)) return PTL_ARG_INVALID;
    uint32_t mask = a.is_le ? PTL_LE_APPEND_OPTIONS_MASK : PTL_ME_APPEND_OPTIONS_MASK;
    if ((a.options & ~mask) || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated ||
        !ct_or_none(a.ct, n->index))
        return PTL_ARG_INVALID;
    if (a.list != PTL_PRIORITY_LIST && a.list != PTL_OVERFLOW_LIST) return PTL_ARG_INVALID;
    bool iovec = a.options & PTL_IOVEC;
    if (iovec && too_many_iovecs(a.is_le ? "PtlLEAppend" : "PtlMEAppend", a.length, n->limits.max_iovecs))
        return PTL_ARG_INVALID;
    auto bytes = region_bytes(RankRegion{&r_, a.start, a.length, iovec});
    if (!bytes) return PTL_ARG_INVALID;
    PortalTableEntry& pt = n->table[a.pt_index];
    // PTL_PT_ONLY_USE_ONCE and PTL_PT_ONLY_TRUNCATE are hints to the NIC, not rules:
    // Open MPI's MTL sets both and still appends persistent overflow entries.
    if (pt.priority.size() + pt.overflow.size() >= static_cast<size_t>(n->limits.max_list_size)) return PTL_LIST_TOO_LONG;
    size_t live = std::count_if(p_.entries.begin(), p_.entries.end(), [](const auto& e) { return e != nullptr; });
    if (live >= static_cast<size_t>(n->limits.max_entries)) return PTL_NO_SPACE;
    HandleKind kind = a.is_le ? HandleKind::LE : HandleKind::ME;
    if (a.handle != 0 && !chosen_handle_free(a.handle, kind)) return PTL_ARG_INVALID;
    management_command();
    auto entry = std::make_shared<ListEntry>();
    uint32_t index = a.handle != 0 ? handle_index(a.handle) : server_entry_index();
    if (index >= p_.entries.size()) p_.entries.resize(index + 1);
    p_.entries[index] = entry;
    entry->handle = make_handle(kind, index);
    entry->ni = n->index;
    entry->pt_index = a.pt_index;
    entry->list = static_cast<ptl_list_t>(a.list);
    entry->start = a.start;
    entry->ct = a.ct;
    entry->min_free = a.min_free;
    entry->user_ptr = a.user_ptr;
    entry->uid = a.uid;
    entry->criteria = criteria_of(a, *n);
    entry->criteria.length = *bytes;
    entry->iov_count = iovec ? a.length : 0;
    out = entry;
    return PTL_OK;
}

int Call::me_append()
{
    ListEntryPtr entry;
    if (int rc = new_entry(args<wire::MEAppendArgs>(), entry); rc != PTL_OK) return rc;
    out<wire::HandleReply>().handle = entry->handle;
    report_link(nic(), p_, entry, claim_and_link(p_, entry));
    return PTL_OK;
}

int Call::me_search()
{
    const auto& a = args<wire::MEAppendArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || n->matching() == static_cast<bool>(a.is_le)) return PTL_ARG_INVALID;
    uint32_t mask = a.is_le ? PTL_LE_APPEND_OPTIONS_MASK : PTL_ME_APPEND_OPTIONS_MASK;
    if ((a.options & ~mask) || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated ||
        !ct_or_none(a.ct, n->index) || (a.list != PTL_SEARCH_ONLY && a.list != PTL_SEARCH_DELETE))
        return PTL_ARG_INVALID;
    // A probing loop (MPI_Iprobe until a message comes: a search, its SEARCH event, one
    // more poll) lets time pass in its searches: a search-only right after an empty poll
    // or a search that found nothing first waits out a polling step, and the reply tells
    // the rank that the empty poll after its SEARCH event is free (mirror_reads.cpp). One
    // round trip per probe instead of two, and the step still grows, so that a long wait
    // costs few probes. The first search after other work does not wait: a program that
    // probes once, then does something else, is not delayed.
    bool step = a.list == PTL_SEARCH_ONLY && p_.probing && !unseen_event_visible();
    if (step && r_.free_empty_poll) {  // another thread holds the rank's time, as for a poll
        step = false;
        r_.answered_free = true;
    }
    bool arrived = false;
    if (step) {
        r_.waiting_on.set([] { return std::string("PtlMESearch in a probing loop"); });
        arrived = fast_forward(begin_empty_poll());
    }
    ListEntry probe;
    probe.ni = n->index;
    probe.criteria = criteria_of(a, *n);
    probe.ct = a.ct;
    PortalTableEntry& pt = n->table[a.pt_index];
    bool claim = a.list == PTL_SEARCH_DELETE;
    TakenHeaders found = take_unexpected(*n, pt, probe, a.user_ptr, claim);
    report_unexpected(nic(), p_, found, probe, pt.eq, claim);
    if (step) {
        out<wire::HandleReply>().value = 1;
        if (found.events.empty() && !arrived) poll_found_nothing(false);
        else poll_found_work();
    }
    if (found.events.empty()) {
        ptl_event_t event{};
        event.type = PTL_EVENT_SEARCH;
        event.user_ptr = reinterpret_cast<void*>(a.user_ptr);
        event.pt_index = a.pt_index;
        event.ni_fail_type = PTL_NI_NO_MATCH;
        write_event(nic(), p_, pt.eq, event, switches_now().pci_commands).run_in_actor();
    }
    return PTL_OK;
}

int Call::me_unlink()
{
    ListEntryPtr e = list_entry(args<wire::HandleArgs>().handle);
    if (!e) return PTL_ARG_INVALID;
    management_command();
    unlink_entry(p_, p_.nis[e->ni], e);
    return PTL_OK;
}
}  // namespace engine

uint64_t g_vain_polls = 0;

}  // namespace s4bxi::sim
