// The target side of a message: the events it makes, matching against the priority and
// overflow lists with flow control, consuming and unlinking entries, unexpected headers,
// writing the payload. All of it happens in the instant the message lands.
#include <fmt/format.h>

#include "nic/nic_internal.hpp"
#include "nic/payload_copy.hpp"
#include "run/registry.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(s4bxi_nic);

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Every rank runs as the user who started the run (the server checks each rank's socket
// for it): one system call for the run rather than two per message.
uint32_t run_uid()
{
    static const uint32_t uid = getuid();
    return uid;
}

}  // namespace

namespace nic_detail {

// Route latency between two hosts; a zero-byte message costs exactly that.
double route_latency(sg4::Host* from, sg4::Host* to)
{
    if (from == to) return 0.0;
    static std::map<std::pair<sg4::Host*, sg4::Host*>, double> cache;
    auto [it, inserted] = cache.try_emplace({from, to}, 0.0);
    if (inserted) {
        std::vector<sg4::Link*> links;
        double latency = 0.0;
        from->route_to(to, links, &latency);
        it->second = latency;
    }
    return it->second;
}

// A zero-byte hand-over from `from` to the rank's core: within a node, the route's
// latency; from another node's NIC (quick ACKs), through the rank's own NIC.
double delivery_latency(sg4::Host* from, const RankPortals& owner)
{
    const NodeHosts& node = nic_model().nic(owner.nid).hosts();
    bool local = from == node.nic || std::find(node.cores.begin(), node.cores.end(), from) != node.cores.end();
    if (local) return route_latency(from, owner.host);
    return route_latency(from, node.nic) + route_latency(node.nic, owner.host);
}


// The initiator as the target's logical NI names it: its index in that NI's map; for a
// process the map does not name (or an NI without a map), the rank its own NI gives it, as
// the reference implementation's header carries it. A lookup in the NI's reverse index.
uint32_t rank_in_target_map(const Transfer& t, const NetworkInterface& target_ni)
{
    if (auto rank = target_ni.rank_of(t.initiator_nid, t.initiator_pid)) return *rank;
    return own_rank(*t.initiator, t.initiator->nis[t.ni_index]);
}

// Of a target event: by rank on a logical NI (the rank the matching found), else by
// (nid, pid).
ptl_process_t initiator_id(const Transfer& t, const NetworkInterface& target_ni)
{
    ptl_process_t id{};
    if (target_ni.options & PTL_NI_LOGICAL) {
        id.rank = static_cast<ptl_rank_t>(t.initiator_rank);
    } else {
        id.phys.nid = t.initiator_nid;
        id.phys.pid = t.initiator_pid;
    }
    return id;
}

ptl_event_t target_event(ptl_event_kind_t kind, const Transfer& t, const ListEntry& entry, const NetworkInterface& ni)
{
    ptl_event_t event{};
    event.type = kind;
    event.start = reinterpret_cast<void*>(region_address(entry.region(*ni.owner->rank), t.offset_used));
    event.user_ptr = reinterpret_cast<void*>(entry.user_ptr);
    event.hdr_data = t.hdr_data;
    event.match_bits = t.match_bits;
    event.rlength = t.length;
    event.mlength = t.mlength;
    event.remote_offset = t.offset_used;
    event.initiator = initiator_id(t, ni);
    event.uid = static_cast<ptl_uid_t>(run_uid());
    event.pt_index = t.pt_index;
    event.ptl_list = entry.list;
    event.ni_fail_type = PTL_NI_OK;
    event.atomic_operation = static_cast<ptl_op_t>(t.atomic_op);
    event.atomic_type = static_cast<ptl_datatype_t>(t.atomic_type);
    return event;
}

ptl_event_t initiator_event(ptl_event_kind_t kind, const Transfer& t, uint64_t mlength)
{
    ptl_event_t event{};
    event.type = kind;
    event.user_ptr = reinterpret_cast<void*>(t.user_ptr);
    event.mlength = mlength;
    event.rlength = t.length;
    event.remote_offset = t.offset_used;
    event.pt_index = t.pt_index;
    event.match_bits = t.match_bits;
    event.hdr_data = t.hdr_data;
    event.ni_fail_type = t.fail;
    event.ptl_list = t.list;
    event.initiator.phys.nid = t.target_nid;
    event.initiator.phys.pid = t.target_pid;
    event.atomic_operation = static_cast<ptl_op_t>(t.atomic_op);
    event.atomic_type = static_cast<ptl_datatype_t>(t.atomic_type);
    return event;
}

Access access_of(MessageType type)
{
    switch (type) {
    case MessageType::Get: return Access::Get;
    case MessageType::Atomic: return Access::Atomic;
    case MessageType::FetchAtomic: return Access::FetchAtomic;
    default: return Access::Put;
    }
}

// Appendix §11.1: the node's NIs in creation order, the PT, the priority list.
MatchResult match_entry(Nic& nic, Transfer& t);

// What the target NIC decided for an incoming message (--log-level debug).
NicTask<MatchResult> match(Nic& nic, Transfer& t)
{
    MatchResult result = match_entry(nic, t);
    if (result.fail == PTL_NI_PT_DISABLED && result.disabled_now) {
        ptl_event_t event{};
        event.type = PTL_EVENT_PT_DISABLED;
        event.pt_index = t.pt_index;
        event.ni_fail_type = PTL_NI_PT_DISABLED;
        co_await write_event(nic, *result.ni->owner, result.ni->table[t.pt_index].eq, event, switches_of(t).pci_commands);
    }
    XBT_DEBUG("node %u: %s from %u:%u to pid %u pt %u bits %#llx, %llu bytes: %s%s%s", nic.nid(),
              t.kind == MessageType::Get ? "get" : t.kind == MessageType::Put ? "put" : "atomic", t.initiator_nid,
              t.initiator_pid, t.target_pid, t.pt_index, static_cast<unsigned long long>(t.match_bits),
              static_cast<unsigned long long>(t.length), result.fail == PTL_NI_OK ? "matched" : "failed",
              result.entry ? (result.entry->list == PTL_OVERFLOW_LIST ? " (overflow list)" : " (priority list)") : "",
              result.ni ? fmt::format(" on rank {}", result.ni->owner->rank->rank).c_str() : "");
    co_return result;
}

// Flow control (PTL_PT_FLOWCTRL): a PT short of a resource disables itself, says so with
// PTL_EVENT_PT_DISABLED (written by match()), and the message is refused (the initiator
// sees PTL_NI_PT_DISABLED) instead of being dropped or losing its events.
MatchResult disable_for_flow_control(Nic&, NetworkInterface& ni, PortalTableEntry& pt, uint32_t pt_index,
                                     const char* why)
{
    XBT_INFO("rank %d: pt %u disabled by flow control: %s", ni.owner->rank->rank, pt_index, why);
    pt.enabled = false;
    MatchResult result{&ni, nullptr, PTL_NI_PT_DISABLED};
    result.disabled_now = true;
    return result;
}

// True when the EQ has room for no more than the PT_DISABLED event flow control may need.
bool event_queue_short(const RankPortals& owner, uint32_t eq_handle)
{
    uint32_t index = handle_index(eq_handle);
    if (eq_handle == PTL_EQ_NONE || index >= owner.eqs.size() || !owner.eqs[index].used) return false;
    const EventQueue& eq = owner.eqs[index];
    return eq.capacity && eq.size() + 1 >= eq.capacity;
}

size_t unexpected_headers(const NetworkInterface& ni)
{
    return ni.unexpected_total;
}

MatchResult match_entry(Nic& nic, Transfer& t)
{
    MatchResult result;
    Incoming incoming{access_of(t.kind), t.match_bits, t.initiator_nid, t.initiator_pid, 0, t.length, t.remote_offset};
    for (NetworkInterface* ni : nic.interfaces()) {
        if (!ni->used || ni->matching() != t.matching) continue;
        if (t.target_pid != PTL_PID_ANY && ni->pid != t.target_pid) continue;
        if (t.pt_index >= ni->table.size() || !ni->table[t.pt_index].allocated) {
            XBT_INFO("rank %d: message from node %u to the unallocated pt %u: dropped", ni->owner->rank->rank,
                     t.initiator_nid, t.pt_index);
            continue;
        }
        PortalTableEntry& pt = ni->table[t.pt_index];
        result.ni = ni;
        // A logical NI's entries reserve themselves to ranks of its map (match_id.rank).
        if (ni->options & PTL_NI_LOGICAL) t.initiator_rank = incoming.rank = rank_in_target_map(t, *ni);
        if (!pt.enabled) {
            result.fail = PTL_NI_PT_DISABLED;
            ++ni->status[PTL_SR_DROP_COUNT];
            return result;
        }
        const bool flow_control = pt.options & PTL_PT_FLOWCTRL;
        if (flow_control && event_queue_short(*ni->owner, pt.eq)) {
            ++ni->status[PTL_SR_DROP_COUNT];
            return disable_for_flow_control(nic, *ni, pt, t.pt_index, "its event queue is full");
        }
        for (const auto* list : {&pt.priority, &pt.overflow})
            for (const ListEntryPtr& entry : *list) {
                if (!criteria_match(entry->criteria, incoming)) continue;
                auto placement = place(entry->criteria, incoming);
                if (!placement) continue;
                // Every rank runs as the user who started the run: an entry for another
                // uid is out of reach (a permission violation); an operation the entry
                // does not allow (PTL_ME_OP_PUT / PTL_ME_OP_GET) is an operation violation.
                bool uid_ok = entry->uid == PTL_UID_ANY || entry->uid == run_uid();
                if (!uid_ok) {
                    result.fail = PTL_NI_PERM_VIOLATION;
                    ++ni->status[PTL_SR_PERMISSION_VIOLATIONS];
                    return result;
                }
                if (!access_permitted(entry->criteria.options, incoming.access)) {
                    result.fail = PTL_NI_OP_VIOLATION;
                    ++ni->status[PTL_SR_OPERATION_VIOLATIONS];
                    return result;
                }
                // Unexpected headers are counted against the NI's limit only under flow
                // control, which has a way to refuse the message (docs/model.md "NI limits").
                if (flow_control && entry->list == PTL_OVERFLOW_LIST &&
                    !(entry->criteria.options & PTL_ME_UNEXPECTED_HDR_DISABLE) &&
                    unexpected_headers(*ni) >= static_cast<size_t>(ni->limits.max_unexpected_headers)) {
                    ++ni->status[PTL_SR_DROP_COUNT];
                    return disable_for_flow_control(nic, *ni, pt, t.pt_index, "no room for another unexpected header");
                }
                result.entry = entry;
                result.fail = PTL_NI_OK;
                t.list = entry->list;
                t.mlength = placement->mlength;
                t.offset_used = placement->offset;
                return result;
            }
        // Nothing matched. With flow control, the PT disables itself and says so.
        ++ni->status[PTL_SR_DROP_COUNT];
        XBT_INFO("rank %d: message from node %u (pt %u, match bits %#llx) matched nothing: dropped",
                 ni->owner->rank->rank, t.initiator_nid, t.pt_index, static_cast<unsigned long long>(t.match_bits));
        if (flow_control) return disable_for_flow_control(nic, *ni, pt, t.pt_index, "no entry matches");
        result.fail = PTL_NI_DROPPED;
        return result;
    }
    return result;
}

// After a match: managed offset, counting event, auto-unlink decision.
bool consume(const ListEntryPtr& entry, Transfer& t)
{
    if (entry->criteria.options & PTL_ME_MANAGE_LOCAL) entry->criteria.managed_offset = t.offset_used + t.mlength;
    bool unlink = (entry->criteria.options & PTL_ME_USE_ONCE) ||
                  ((entry->criteria.options & PTL_ME_MANAGE_LOCAL) &&
                   exhausted(entry->criteria.length, entry->criteria.managed_offset, entry->min_free));
    return unlink;
}

void count_entry(RankPortals& owner, const ListEntry& entry, const Transfer& t)
{
    if (!(entry.criteria.options & PTL_ME_EVENT_CT_COMM) || entry.ct == PTL_CT_NONE) return;
    // Counted as the target's event says: a success (a payload the NIC could not write is
    // the initiator's PTL_NI_SEGV, not the target's).
    count_completion(owner, entry.ct, entry.criteria.options & PTL_ME_EVENT_CT_BYTES, t.mlength, PTL_NI_OK);
}

bool comm_events_enabled(const ListEntry& entry)
{
    return !(entry.criteria.options & (PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE));
}

// Unlinks a consumed entry at once, in the same instant as the match: a program's append
// or a message on another VN in between would see it still linked. True when its
// AUTO_UNLINK event is due (written by auto_unlink_event after the operation's own event,
// as the reference implementation orders them).
bool auto_unlink(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry, bool unlink)
{
    if (!unlink) return false;
    unlink_entry(owner, ni, entry);
    if (entry->criteria.options & (PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE)) return false;
    entry->free_pending = entry->list == PTL_OVERFLOW_LIST;
    return true;
}

// The AUTO_UNLINK event when due, then the AUTO_FREE if no header points into the entry.
NicTask<> auto_unlink_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry, bool due,
                            bool over_pcie)
{
    if (due) co_await write_entry_event(nic, owner, ni, entry, PTL_EVENT_AUTO_UNLINK, over_pcie);
    co_await auto_free_if_due(nic, owner, ni, entry, over_pcie);
}

NicTask<> write_deferred_event(Nic& nic, Transfer& t)
{
    if (!t.deferred_pending) co_return;
    t.deferred_pending = false;
    co_await write_event(nic, *t.target, t.target_eq, t.deferred, switches_of(t).pci_commands);
    ListEntryPtr entry = std::move(t.deferred_unlink);
    if (entry && entry->ni < std::size(t.target->nis) && t.target->nis[entry->ni].used)  // not finalized meanwhile
        co_await auto_unlink_event(nic, *t.target, t.target->nis[entry->ni], *entry, true, switches_of(t).pci_commands);
}

ptl_event_kind_t overflow_kind(ptl_event_kind_t kind)
{
    switch (kind) {
    case PTL_EVENT_GET: return PTL_EVENT_GET_OVERFLOW;
    case PTL_EVENT_ATOMIC: return PTL_EVENT_ATOMIC_OVERFLOW;
    case PTL_EVENT_FETCH_ATOMIC: return PTL_EVENT_FETCH_ATOMIC_OVERFLOW;
    default: return PTL_EVENT_PUT_OVERFLOW;
    }
}

// A message that landed in an overflow-list entry leaves an unexpected header, unless
// the entry asks for none. The header is an arrival even without an event: a polling
// loop that searches the overflow list (MPI_Iprobe) would find it on its next round, so
// the fast-forward of its empty polls ends there.
void record_unexpected(NetworkInterface& ni, const Transfer& t, const ListEntryPtr& entry, const ptl_event_t& event)
{
    if (entry->list != PTL_OVERFLOW_LIST || (entry->criteria.options & PTL_ME_UNEXPECTED_HDR_DISABLE)) return;
    UnexpectedHeader header{event,
                            Incoming{access_of(t.kind), t.match_bits, t.initiator_nid, t.initiator_pid, t.initiator_rank,
                                     t.length, t.remote_offset},
                            entry};
    header.event.type = overflow_kind(event.type);
    ni.table[t.pt_index].unexpected.push_back(header);
    ++ni.unexpected_total;
    ++entry->headers;
    note_arrival(*ni.owner, sg4::Engine::get_clock(), false);
}

bool deliver_payload(const Transfer& t, const RankRegion& to, uint64_t offset)
{
    if (t.mlength == 0) return true;
    if (t.payload_at_delivery)
        return copy_between_ranks(t.md.region(*t.initiator->rank), t.local_offset, to, offset, t.mlength);
    return t.payload_readable && write_region(to, offset, t.payload.get(), t.mlength);
}

}  // namespace nic_detail

}  // namespace s4bxi::sim
