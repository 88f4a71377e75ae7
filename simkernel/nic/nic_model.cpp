#include "nic/nic_model.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <map>

#include <simgrid/kernel/Timer.hpp>

#include "nic/payload_copy.hpp"
#include "portals/atomics.hpp"
#include "portals/portals_engine.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/registry.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_nic, "The BXI NIC model");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

NicModel* g_model = nullptr;

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


ptl_process_t initiator_id(const Transfer& t, const NetworkInterface& target_ni)
{
    ptl_process_t id{};
    if (target_ni.options & PTL_NI_LOGICAL) {
        id.rank = static_cast<ptl_rank_t>(t.initiator->rank->rank);
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
    event.start = reinterpret_cast<void*>(region_address(entry.region(ni.owner->rank->pid), t.offset_used));
    event.user_ptr = reinterpret_cast<void*>(entry.user_ptr);
    event.hdr_data = t.hdr_data;
    event.match_bits = t.match_bits;
    event.rlength = t.length;
    event.mlength = t.mlength;
    event.remote_offset = t.offset_used;
    event.initiator = initiator_id(t, ni);
    event.uid = static_cast<ptl_uid_t>(getuid());
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

struct MatchResult {
    NetworkInterface* ni = nullptr;
    ListEntryPtr entry;
    ptl_ni_fail_t fail = PTL_NI_DROPPED;
};

// Appendix §11.1: the node's NIs in creation order, the PT, the priority list.
MatchResult match_entry(Nic& nic, Transfer& t);

// What the target NIC decided for an incoming message (--log-level debug).
MatchResult match(Nic& nic, Transfer& t)
{
    MatchResult result = match_entry(nic, t);
    XBT_DEBUG("node %u: %s from %u:%u to pid %u pt %u bits %#llx, %llu bytes: %s%s%s", nic.nid(),
              t.kind == MessageType::Get ? "get" : t.kind == MessageType::Put ? "put" : "atomic", t.initiator_nid,
              t.initiator_pid, t.target_pid, t.pt_index, static_cast<unsigned long long>(t.match_bits),
              static_cast<unsigned long long>(t.length), result.fail == PTL_NI_OK ? "matched" : "failed",
              result.entry ? (result.entry->list == PTL_OVERFLOW_LIST ? " (overflow list)" : " (priority list)") : "",
              result.ni ? fmt::format(" on rank {}", result.ni->owner->rank->rank).c_str() : "");
    return result;
}

// Flow control (PTL_PT_FLOWCTRL): a PT short of a resource disables itself, says so with
// PTL_EVENT_PT_DISABLED, and the message is refused (the initiator sees
// PTL_NI_PT_DISABLED) instead of being dropped or losing its events.
MatchResult disable_for_flow_control(Nic& nic, NetworkInterface& ni, PortalTableEntry& pt, uint32_t pt_index,
                                     const char* why)
{
    XBT_INFO("rank %d: pt %u disabled by flow control: %s", ni.owner->rank->rank, pt_index, why);
    pt.enabled = false;
    ptl_event_t event{};
    event.type = PTL_EVENT_PT_DISABLED;
    event.pt_index = pt_index;
    event.ni_fail_type = PTL_NI_PT_DISABLED;
    write_event(nic, *ni.owner, pt.eq, event);
    return MatchResult{&ni, nullptr, PTL_NI_PT_DISABLED};
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
    size_t count = 0;
    for (const PortalTableEntry& pt : ni.table) count += pt.unexpected.size();
    return count;
}

MatchResult match_entry(Nic& nic, Transfer& t)
{
    MatchResult result;
    Incoming incoming{access_of(t.kind), t.match_bits, t.initiator_nid, t.initiator_pid,
                      static_cast<uint32_t>(t.initiator->rank->rank), t.length, t.remote_offset};
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
                // uid is out of reach.
                bool uid_ok = entry->uid == PTL_UID_ANY || entry->uid == static_cast<uint32_t>(getuid());
                if (!uid_ok || !access_permitted(entry->criteria.options, incoming.access)) {
                    result.fail = PTL_NI_PERM_VIOLATION;
                    ++ni->status[PTL_SR_PERMISSION_VIOLATIONS];
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
    uint64_t amount = (entry.criteria.options & PTL_ME_EVENT_CT_BYTES) ? t.mlength : 1;
    count_event(owner, entry.ct, amount, 0);
}

bool comm_events_enabled(const ListEntry& entry)
{
    return !(entry.criteria.options & (PTL_ME_EVENT_COMM_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE));
}

// Unlinks a consumed entry at once, in the same instant as the match: a program's append
// or a message on another VN in between would see it still linked. True when its
// AUTO_UNLINK event is due (written by auto_unlink_event, before the PUT/ATOMIC one).
bool auto_unlink(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry, bool unlink)
{
    if (!unlink) return false;
    unlink_entry(owner, ni, entry);
    if (entry->criteria.options & (PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE)) return false;
    entry->free_pending = entry->list == PTL_OVERFLOW_LIST;
    return true;
}

void auto_unlink_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, const ListEntry& entry, bool due)
{
    if (due) write_entry_event(nic, owner, ni, entry, PTL_EVENT_AUTO_UNLINK);
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

void note_arrival(RankPortals& owner, double visible_at, bool event);

// A message that landed in an overflow-list entry leaves an unexpected header, unless
// the entry asks for none. The header is an arrival even without an event: a polling
// loop that searches the overflow list (MPI_Iprobe) would find it on its next round, so
// the fast-forward of its empty polls ends there.
void record_unexpected(NetworkInterface& ni, const Transfer& t, const ListEntryPtr& entry, const ptl_event_t& event)
{
    if (entry->list != PTL_OVERFLOW_LIST || (entry->criteria.options & PTL_ME_UNEXPECTED_HDR_DISABLE)) return;
    UnexpectedHeader header{event,
                            Incoming{access_of(t.kind), t.match_bits, t.initiator_nid, t.initiator_pid,
                                     static_cast<uint32_t>(t.initiator->rank->rank), t.length, t.remote_offset},
                            entry};
    header.event.type = overflow_kind(event.type);
    ni.table[t.pt_index].unexpected.push_back(header);
    ++entry->headers;
    note_arrival(*ni.owner, sg4::Engine::get_clock(), false);
}

bool deliver_payload(const Transfer& t, const RankRegion& to, uint64_t offset)
{
    if (t.mlength == 0) return true;
    if (t.payload_at_delivery)
        return copy_between_ranks(t.md.region(t.initiator->rank->pid), t.local_offset, to, offset, t.mlength);
    return t.payload_readable && write_region(to, offset, t.payload.get(), t.mlength);
}

}  // namespace

NicModel& nic_model()
{
    return *g_model;
}

void transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes)
{
    LoneTransfers& lone = nic_model().lone_transfers();
    if (auto duration = lone.computed_duration(from, to, bytes)) {
        sg4::this_actor::sleep_for(*duration);
        return;
    }
    SimulatedTransfer simulated(lone, from, to);
    sg4::Comm::sendto(from, to, bytes);
}

void pci_transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    double start = sg4::Engine::get_clock();
    transfer(from, to, bytes);
    if (trace::enabled()) trace::record(op, nid, nid, start, sg4::Engine::get_clock());
}

AsyncPci AsyncPci::start_transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    double now = sg4::Engine::get_clock();
    LoneTransfers& lone = nic_model().lone_transfers();
    if (auto duration = lone.computed_duration(from, to, bytes))
        return AsyncPci{nullptr, now, op, nid, from, to, now + *duration};
    lone.simulated_begins(from, to);
    return AsyncPci{sg4::Comm::sendto_async(from, to, bytes), now, op, nid, from, to};
}

void AsyncPci::wait()
{
    if (!comm) {
        double now = sg4::Engine::get_clock();
        if (computed_end > now) sg4::this_actor::sleep_for(computed_end - now);
        if (trace::enabled()) trace::record(op, nid, nid, start, computed_end);
        return;
    }
    {
        SimulatedTransfer ends(nic_model().lone_transfers(), from, to, SimulatedTransfer::Since::Earlier);
        comm->wait();
    }
    // The row ends when the transfer did, which may be long before this wait (the NIC
    // wrote an event in between): the reference traces async transfers at completion.
    if (trace::enabled()) trace::record(op, nid, nid, start, comm->get_finish_time());
}

void detached_pci(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    AsyncPci transfer = AsyncPci::start_transfer(from, to, bytes, op, nid);
    if (!transfer.comm) {  // computed: its end is known now
        if (trace::enabled()) trace::record(op, nid, nid, transfer.start, transfer.computed_end);
        return;
    }
    // Someone must see the end of a simulated transfer: its links count it until then.
    auto simulated = std::make_shared<AsyncPci>(std::move(transfer));
    sg4::Actor::create("pci_detached", from, [simulated] { simulated->wait(); })->daemonize();
}

trace::Op trace_op(MessageType type)
{
    switch (type) {
    case MessageType::Put: return trace::Op::PTL_PUT;
    case MessageType::Get: return trace::Op::PTL_GET;
    case MessageType::Atomic: return trace::Op::PTL_ATOMIC;
    case MessageType::FetchAtomic: return trace::Op::PTL_FETCH_ATOMIC;
    case MessageType::PtlAck: return trace::Op::PTL_ACK;
    case MessageType::E2eAck: return trace::Op::E2E_ACK;
    case MessageType::GetResponse: return trace::Op::PTL_GET_RESPONSE;
    case MessageType::FetchAtomicResponse: return trace::Op::PTL_FETCH_ATOMIC_RESPONSE;
    }
    return trace::Op::PTL_PUT;
}

void set_nic_model(NicModel* model)
{
    g_model = model;
}

double first_packet_wait(uint64_t size)
{
    const NicTimings& timing = nic_model().timings();
    if (size >= timing.packet_size)
        return timing.pci_latency_heuristic + static_cast<double>(timing.packet_size) / timing.pci_heuristic_bandwidth;
    return timing.pci_latency_heuristic + static_cast<double>(size) / timing.pci_heuristic_bandwidth;
}

uint64_t inline_limit(bool matching)
{
    const NicTimings& timing = nic_model().timings();
    return matching ? timing.inline_matching : timing.inline_non_matching;
}

uint64_t pio_limit(bool matching)
{
    const NicTimings& timing = nic_model().timings();
    return matching ? timing.pio_matching : timing.pio_non_matching;
}

VirtualNetwork response_vn(VirtualNetwork request_vn)
{
    return request_vn == VirtualNetwork::ServiceRequest || request_vn == VirtualNetwork::ServiceResponse
               ? VirtualNetwork::ServiceResponse
               : VirtualNetwork::ComputeResponse;
}

namespace {

// Something for the rank to notice, visible at `visible_at`: its proxy, if it waits, looks
// again (an empty poll's fast-forward ends at arrivals).
void note_arrival(RankPortals& owner, double visible_at, bool event)
{
    ++owner.arrivals;
    owner.last_arrival_visible_at = visible_at;
    if (event) {
        ++owner.events;
        owner.last_event_visible_at = visible_at;
    }
    owner.activity->notify_all();
}

}  // namespace

void auto_free_if_due(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry)
{
    if (!entry.free_pending || entry.headers > 0) return;
    entry.free_pending = false;
    write_entry_event(nic, owner, ni, entry, PTL_EVENT_AUTO_FREE);
}

void write_entry_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, const ListEntry& entry,
                       ptl_event_kind_t type)
{
    ptl_event_t event{};
    event.type = type;
    event.user_ptr = reinterpret_cast<void*>(entry.user_ptr);
    event.pt_index = entry.pt_index;
    event.ptl_list = entry.list;
    event.ni_fail_type = PTL_NI_OK;
    write_event(nic, owner, ni.table[entry.pt_index].eq, event);
}

void write_event(Nic& nic, RankPortals& owner, uint32_t eq_handle, const ptl_event_t& event)
{
    if (eq_handle == PTL_EQ_NONE) return;
    uint32_t index = handle_index(eq_handle);
    if (index >= owner.eqs.size() || !owner.eqs[index].used) return;  // freed meanwhile
    if (nic_model().spec().model_pci_commands)
        pci_transfer(nic.hosts().nic, nic.cpu0(), nic_model().timings().event_size, trace::Op::PCI_EVENT, nic.nid());
    EventQueue& eq = owner.eqs[index];
    XBT_DEBUG("rank %d: event %d (ni_fail %d) in eq %#x", owner.rank->rank, static_cast<int>(event.type),
              static_cast<int>(event.ni_fail_type), eq_handle);
    double visible = sg4::Engine::get_clock() + delivery_latency(sg4::this_actor::get_host(), owner);
    if (!eq.push({visible, event})) return;
    note_arrival(owner, visible, true);
}

namespace {

// Fires, in threshold then registration order, every trigger the counter has reached.
void fire_triggers(RankPortals& owner, uint32_t index)
{
    while (index < owner.cts.size() && owner.cts[index].used) {
        auto& triggers = owner.cts[index].triggers;
        auto due = std::min_element(triggers.begin(), triggers.end(), [](const Trigger& a, const Trigger& b) {
            return a.threshold != b.threshold ? a.threshold < b.threshold : a.order < b.order;
        });
        if (due == triggers.end() || due->threshold > owner.cts[index].value.success) return;
        auto fire = std::move(due->fire);
        triggers.erase(due);
        fire();  // may change this or other counters, and fire their triggers
    }
}

Counter* counter(RankPortals& owner, uint32_t ct_handle)
{
    if (ct_handle == PTL_CT_NONE || handle_kind(ct_handle) != HandleKind::CT) return nullptr;
    uint32_t index = handle_index(ct_handle);
    return index < owner.cts.size() && owner.cts[index].used ? &owner.cts[index] : nullptr;
}

}  // namespace

void count_event(RankPortals& owner, uint32_t ct_handle, uint64_t success, uint64_t failure)
{
    Counter* c = counter(owner, ct_handle);
    if (!c) return;
    c->value.success += success;
    c->value.failure += failure;
    c->publish();
    note_arrival(owner, sg4::Engine::get_clock(), false);
    fire_triggers(owner, handle_index(ct_handle));
}

void set_counter(RankPortals& owner, uint32_t ct_handle, ptl_ct_event_t value)
{
    Counter* c = counter(owner, ct_handle);
    if (!c) return;
    c->value = value;
    c->publish();
    note_arrival(owner, sg4::Engine::get_clock(), false);
    fire_triggers(owner, handle_index(ct_handle));
}

namespace {

void read_payload_now(Transfer& t)
{
    t.payload_at_delivery = false;
    t.payload = std::make_unique_for_overwrite<unsigned char[]>(t.length);
    t.payload_readable =
        t.length == 0 || read_region(t.md.region(t.initiator->rank->pid), t.local_offset, t.payload.get(), t.length);
}

}  // namespace

void capture_payload(const TransferPtr& transfer)
{
    Transfer& t = *transfer;
    if (t.kind == MessageType::Get) return;
    // A Put larger than the E2E context keeps the buffer until it is acknowledged (SEND
    // comes with the ACK, tx_put_like), so its bytes are still there when it lands.
    const PlatformSpec& spec = nic_model().spec();
    t.payload_at_delivery = t.kind == MessageType::Put && !(t.md.options & PTL_MD_VOLATILE) &&
                            t.length > spec.timings.e2e_context_size && (spec.e2e || t.ack_req != PTL_NO_ACK_REQ);
    if (!t.payload_at_delivery) {
        read_payload_now(t);
        return;
    }
    auto& pending = t.initiator->payloads_in_memory;
    if (pending.size() >= 2 * t.initiator->payloads_in_memory_pruned + 64) {
        std::erase_if(pending, [](const std::weak_ptr<Transfer>& weak) {
            TransferPtr other = weak.lock();
            return !other || !other->payload_at_delivery || other->state != TransferState::Created;
        });
        t.initiator->payloads_in_memory_pruned = pending.size();
    }
    pending.push_back(transfer);
}

void capture_pending_payloads(RankPortals& initiator)
{
    for (const auto& weak : initiator.payloads_in_memory)
        if (TransferPtr t = weak.lock(); t && t->payload_at_delivery && t->state == TransferState::Created)
            read_payload_now(*t);
    initiator.payloads_in_memory.clear();
    initiator.payloads_in_memory_pruned = 0;
}

void issue_triggered(const TransferPtr& transfer)
{
    Transfer& t = *transfer;
    capture_payload(transfer);
    t.triggered = true;
    uint64_t size = t.kind == MessageType::Get ? nic_model().timings().get_request_size : t.length;
    nic_model().nic(t.initiator_nid).tx_queue(t.request_vn).push_detached(
        new Message{t.kind, transfer, size, t.initiator_nid, t.target_nid, t.kind});
}

void emit_send(Nic& nic, Transfer& t)
{
    if (t.send_emitted) return;
    t.send_emitted = true;
    if (t.md.options & PTL_MD_EVENT_CT_SEND)
        count_event(*t.initiator, t.md.ct, (t.md.options & PTL_MD_EVENT_CT_BYTES) ? t.length : 1, 0);
    if (t.md.options & (PTL_MD_EVENT_SEND_DISABLE | PTL_MD_EVENT_SUCCESS_DISABLE)) return;
    ptl_event_t event = initiator_event(PTL_EVENT_SEND, t, t.length);
    event.ni_fail_type = PTL_NI_OK;
    write_event(nic, *t.initiator, t.md.eq, event);
}

void report_undeliverable(Nic& nic, Transfer& t)
{
    t.fail = PTL_NI_UNDELIVERABLE;
    t.state = TransferState::Finished;
    if (t.kind == MessageType::Get || t.kind == MessageType::FetchAtomic) {
        const MemoryDescriptor& md = t.kind == MessageType::Get ? t.md : t.get_md;
        if (md.options & PTL_MD_EVENT_CT_REPLY) count_event(*t.initiator, md.ct, 0, 1);
        write_event(nic, *t.initiator, md.eq, initiator_event(PTL_EVENT_REPLY, t, 0));
        return;
    }
    if (!t.send_emitted) {  // the NIC no longer needs the buffer
        t.send_emitted = true;
        if (t.md.options & PTL_MD_EVENT_CT_SEND) count_event(*t.initiator, t.md.ct, 0, 1);
        write_event(nic, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_SEND, t, t.length));
    }
    if (t.ack_req == PTL_NO_ACK_REQ) return;
    if (t.md.options & PTL_MD_EVENT_CT_ACK) count_event(*t.initiator, t.md.ct, 0, 1);
    if (t.ack_req == PTL_ACK_REQ) write_event(nic, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_ACK, t, 0));
}

// ---------------------------------------------------------------------------------------

void ArrivalQueue::init()
{
    available_ = sg4::Semaphore::create(0);
}

void ArrivalQueue::pump_from(sg4::Mailbox* mailbox, sg4::Host* host, const std::string& name,
                             std::function<void(const Message&)> landed)
{
    auto pump = sg4::Actor::create(name + "_pump", host, [this, mailbox, landed] {
        while (true) {
            try {
                Message* message = mailbox->get<Message>();
                if (landed) landed(*message);
                push(message);
            } catch (const simgrid::NetworkFailureException&) {
                // lost on a link that went down on its way here
            }
        }
    });
    pump->daemonize();
    mailbox->set_receiver(pump);
}

void ArrivalQueue::push(Message* message)
{
    messages_.push_back(message);
    available_->release();
}

Message* ArrivalQueue::pop()
{
    available_->acquire();
    Message* message = messages_.front();
    messages_.pop_front();
    return message;
}

void CommandQueue::init(const std::string& name, bool over_pcie)
{
    over_pcie_ = over_pcie;
    mailbox_ = sg4::Mailbox::by_name(name);
    arrived_.init();
}

void CommandQueue::set_consumer(sg4::ActorPtr actor)
{
    nic_host_ = actor->get_host();
    if (over_pcie_) arrived_.pump_from(mailbox_, nic_host_, mailbox_->get_name());
}

void CommandQueue::push_blocking(Message* message, uint64_t bytes)
{
    // The writer waits for its write anyway: the transfer, then the queue, costs the same
    // simulated time as a mailbox and its pump, with two simulated activities fewer.
    if (over_pcie_) transfer(sg4::this_actor::get_host(), nic_host_, bytes);
    arrived_.push(message);
}

void CommandQueue::push_detached(Message* message)
{
    // From the NIC itself nothing crosses PCIe: straight into the queue. From a core (a
    // triggered operation fired by the program's counter update), the write's latency.
    if (over_pcie_ && sg4::this_actor::get_host() != nic_host_) mailbox_->put_init(message, 0)->detach();
    else arrived_.push(message);
}

Message* CommandQueue::pop()
{
    return arrived_.pop();
}

// ---------------------------------------------------------------------------------------

Nic::Nic(uint32_t nid, NodeHosts hosts, const PlatformSpec& spec)
    : nid_(nid), hosts_(std::move(hosts)), spec_(spec), e2e_(*this, spec)
{
    for (int vn = 0; vn < 4; ++vn) {
        tx_[vn].init(fmt::format("{}_nic_tx_{}", nid, vn), spec.model_pci_commands);
        e2e_acks_[vn].init(fmt::format("{}_nic_e2e_acks_{}", nid, vn), false);
        rx_[vn] = sg4::Mailbox::by_name(fmt::format("{}_nic_rx_{}", nid, vn));
        rx_arrived_[vn].init();
    }
}

void Nic::start()
{
    e2e_.start();
    // Compute and service VNs on every node (which ranks use the service VNs is known only
    // as they register; idle engines cost nothing). Each request VN comes with its response
    // VN, which carries the BXI ACKs' own lane.
    for (VirtualNetwork request : {VirtualNetwork::ComputeRequest, VirtualNetwork::ServiceRequest}) {
        VirtualNetwork response = response_vn(request);
        for (VirtualNetwork vn : {request, response}) {
            auto tx = sg4::Actor::create(fmt::format("{}_TX{}", hosts_.name, static_cast<int>(vn)), hosts_.nic,
                                         [this, vn] { tx_loop(vn); });
            tx->daemonize();
            tx_queue(vn).set_consumer(tx);
            auto rx = sg4::Actor::create(fmt::format("{}_RX{}", hosts_.name, static_cast<int>(vn)), hosts_.nic,
                                         [this, vn] { rx_loop(vn); });
            rx->daemonize();
            rx_arrived_[static_cast<int>(vn)].pump_from(
                rx_mailbox(vn), hosts_.nic, fmt::format("{}_RX{}", hosts_.name, static_cast<int>(vn)),
                [this](const Message& m) {
                    nic_model().lone_transfers().simulated_ends(nic_model().nic(m.source_nid).hosts().nic, hosts_.nic);
                });
        }
        if (spec_.e2e) {
            auto acks = sg4::Actor::create(fmt::format("{}_E2E_ACK{}", hosts_.name, static_cast<int>(response)),
                                           hosts_.nic, [this, response] { e2e_ack_loop(response); });
            acks->daemonize();
        }
    }
}

void Nic::e2e_ack_loop(VirtualNetwork vn)
{
    while (true) {
        Message* ack = e2e_acks_[static_cast<int>(vn)].pop();
        ++g_sim_activity;
        try {
            tx_e2e_ack(ack, vn);
        } catch (const simgrid::NetworkFailureException&) {
            XBT_INFO("node %u: a BXI ACK was lost to a link that is down", nid_);
        }
    }
}

void Nic::tx_loop(VirtualNetwork vn)
{
    while (true) {
        Message* message = tx_queue(vn).pop();
        ++g_sim_activity;
        // Flow control (first transmissions only): a message over its in-flight limit
        // waits, keeping its command-queue slot, until a credit comes back.
        if (message->retries == 0 && !e2e_.take_credits(*message, vn)) {
            e2e_.park(message, vn);
            continue;
        }
        try {
            switch (message->type) {
            case MessageType::Put:
            case MessageType::Atomic:
            case MessageType::FetchAtomic: tx_put_like(message, vn); break;
        case MessageType::Get: tx_get(message, vn); break;
        case MessageType::PtlAck: tx_ptl_ack(message, vn); break;
        case MessageType::E2eAck: tx_e2e_ack(message, vn); break;
            case MessageType::GetResponse:
            case MessageType::FetchAtomicResponse: tx_response(message, vn); break;
            }
        } catch (const simgrid::NetworkFailureException&) {
            // A PCIe transfer of this message crossed a link that is down: the message is
            // lost, and E2E sends it again.
            XBT_INFO("node %u: a transfer failed on a link that is down; the message is lost", nid_);
        }
    }
}

void Nic::rx_loop(VirtualNetwork vn)
{
    while (true) {
        Message* message = rx_arrived_[static_cast<int>(vn)].pop();
        ++g_sim_activity;
        bool blocking_send = message->type == MessageType::Get || message->type == MessageType::PtlAck ||
                             message->type == MessageType::E2eAck;
        if (trace::enabled() && !blocking_send)  // until this RX takes it, as the reference traces
            trace::record(trace_op(message->type), message->source_nid, message->destination_nid, message->sent_at,
                          sg4::Engine::get_clock());
        try {
        switch (message->type) {
        case MessageType::Put: rx_put(message, vn); break;
        case MessageType::Atomic: rx_atomic(message, vn); break;
        case MessageType::Get: rx_get(message, vn, false); break;
        case MessageType::FetchAtomic: rx_get(message, vn, true); break;
        case MessageType::GetResponse:
        case MessageType::FetchAtomicResponse: rx_response(message); break;
        case MessageType::PtlAck: rx_ptl_ack(message); break;
        case MessageType::E2eAck: rx_e2e_ack(message); break;
        }
        } catch (const simgrid::NetworkFailureException&) {
            XBT_INFO("node %u: a payload or event write failed on a link that is down", nid_);
        }
        delete message;
    }
}

// Before every network send: the 2 ns preparation, then the E2E registration (which may
// wait for a free entry). A retransmission keeps its first registration's entry.
void Nic::prepare_send(Message* message, VirtualNetwork vn)
{
    sg4::this_actor::sleep_for(nic_model().timings().send_preparation);
    Transfer& t = *message->transfer;
    bool request = message->type == MessageType::Put || message->type == MessageType::Get ||
                   message->type == MessageType::Atomic || message->type == MessageType::FetchAtomic;
    E2eRecordPtr& record = request ? t.request_record : t.response_record;
    if (message->type != MessageType::E2eAck)
        record = e2e_.register_send(*message, vn, message->retries ? record : nullptr);
}

// The message travels from this NIC to the destination's RX engine of the same VN. A
// message caught by a link failure is lost; E2E sends it again.
void Nic::network_send(Message* message, VirtualNetwork vn, bool blocking)
{
    nic_model().bytes_moved += message->size;
    Nic& destination = nic_model().nic(message->destination_nid);
    sg4::Host* to = destination.hosts().nic;
    message->sent_at = sg4::Engine::get_clock();
    ArrivalQueue* arrivals = &destination.rx_arrived_[static_cast<int>(vn)];
    try {
        if (blocking) {
            // Traced here, from before the send preparation to the transfer's end: the
            // receiver may free the message as soon as it has it. The sender waits for the
            // transfer: then it hands the message over itself, no mailbox needed.
            trace::Op op = trace_op(message->type);
            uint32_t from = nid_, to_nid = message->destination_nid;
            double start = message->sent_at - nic_model().timings().send_preparation;
            transfer(hosts_.nic, to, message->size);
            arrivals->push(message);
            if (trace::enabled()) trace::record(op, from, to_nid, start, sg4::Engine::get_clock());
            return;
        }
        LoneTransfers& lone = nic_model().lone_transfers();
        if (auto computed = lone.computed_duration(hosts_.nic, to, message->size)) {
            // Nobody waits for it: a timer hands it to the destination's RX when it lands.
            simgrid::kernel::timer::Timer::set(message->sent_at + *computed, [arrivals, message] { arrivals->push(message); });
        } else {
            // Its links count it until the destination's pump has it (rx_arrived_).
            lone.simulated_begins(hosts_.nic, to);
            destination.rx_mailbox(vn)->put_init(message, message->size)->detach();
        }
    } catch (const simgrid::NetworkFailureException&) {
        XBT_INFO("node %u: a message to node %u was lost to a link failure", nid_, message->destination_nid);
        delete message;
    }
}

void Nic::tx_put_like(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;  // the message may be gone after the send
    Transfer& t = *transfer;
    const NicTimings& timing = nic_model().timings();
    bool first = message->retries == 0;
    if (first && !t.triggered) t.initiator->nis[t.ni_index].command_slots->release();
    prepare_send(message, vn);
    // A retransmission reads the payload again only if it did not fit the E2E context.
    bool dma = spec_.model_pci && (first ? !t.pio && t.length > inline_limit(t.matching) : t.length > timing.e2e_context_size);
    AsyncPci dma_read;
    if (dma) {
        pci_transfer(hosts_.nic, cpu0(), timing.dma_request_size, trace::Op::PCI_DMA_REQUEST, nid_);
        dma_read = AsyncPci::start_transfer(cpu0(), hosts_.nic, t.length - inline_limit(t.matching),
                                            trace::Op::PCI_DMA_PAYLOAD, nid_);
        sg4::this_actor::sleep_for(first_packet_wait(t.length));
    }
    network_send(message, vn, false);
    if (dma) dma_read.wait();
    else sg4::this_actor::sleep_for(timing.tx_after_put_no_dma);
    // Up to the E2E context size the NIC keeps the payload: SEND right away. Without E2E
    // and without any ACK, the buffer is free once the DMA read is over.
    bool no_ack_at_all = !spec_.e2e && t.ack_req == PTL_NO_ACK_REQ && t.kind != MessageType::FetchAtomic;
    if (first && (t.length <= timing.e2e_context_size || no_ack_at_all)) emit_send(*this, t);
}

void Nic::tx_get(Message* message, VirtualNetwork vn)
{
    Transfer& t = *message->transfer;
    if (message->retries == 0 && !t.triggered) t.initiator->nis[t.ni_index].command_slots->release();
    prepare_send(message, vn);
    network_send(message, vn, true);
    sg4::this_actor::sleep_for(nic_model().timings().tx_after_get);
}

void Nic::tx_ptl_ack(Message* message, VirtualNetwork vn)
{
    prepare_send(message, vn);
    network_send(message, vn, true);
    sg4::this_actor::sleep_for(nic_model().timings().tx_after_ptl_ack);
}

void Nic::tx_e2e_ack(Message* message, VirtualNetwork vn)
{
    prepare_send(message, vn);
    network_send(message, vn, true);
}

void Nic::tx_response(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;  // the message may be gone after the send
    Transfer& t = *transfer;
    const NicTimings& timing = nic_model().timings();
    prepare_send(message, vn);
    if (spec_.model_pci && message->size > 0) {  // responses always use DMA
        pci_transfer(hosts_.nic, cpu0(), timing.dma_request_size, trace::Op::PCI_DMA_REQUEST, nid_);
        AsyncPci dma_read =
            AsyncPci::start_transfer(cpu0(), hosts_.nic, message->size, trace::Op::PCI_DMA_PAYLOAD, nid_);
        sg4::this_actor::sleep_for(first_packet_wait(message->size));
        network_send(message, vn, false);
        dma_read.wait();
    } else {
        network_send(message, vn, false);
        sg4::this_actor::sleep_for(timing.tx_after_response_no_dma);
    }
    if (!spec_.e2e && t.deferred_pending) {
        t.deferred_pending = false;
        write_event(*this, *t.target, t.target_eq, t.deferred);
    }
}

// ACK step at the target (appendix §5.1 step 4): a PTL ACK when the initiator asked for
// one, otherwise a bare BXI ACK when E2E is on.
void Nic::queue_ack(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn)
{
    if (!ptl_ack && !spec_.e2e) return;
    if (spec_.quick_acks) {  // appendix §7.2: nothing on the network; this RX does the initiator's part
        Transfer& t = *transfer;
        Nic& initiator = nic_model().nic(t.initiator_nid);
        t.state = TransferState::Finished;
        initiator.e2e().acknowledge(t.request_record);
        emit_send(initiator, t);
        if (!ptl_ack) return;
        if (t.md.options & PTL_MD_EVENT_CT_ACK)
            count_event(*t.initiator, t.md.ct, (t.md.options & PTL_MD_EVENT_CT_BYTES) ? t.mlength : 1,
                        t.fail != PTL_NI_OK);
        if (t.ack_req == PTL_ACK_REQ && (!(t.md.options & PTL_MD_EVENT_SUCCESS_DISABLE) || t.fail != PTL_NI_OK))
            write_event(initiator, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_ACK, t, t.matched ? t.mlength : 0));
        return;
    }
    auto* ack = new Message{ptl_ack ? MessageType::PtlAck : MessageType::E2eAck, transfer,
                            nic_model().timings().ack_size, nid_, transfer->initiator_nid, transfer->kind};
    if (ptl_ack) tx_queue(response_vn(request_vn)).push_detached(ack);
    else send_e2e_ack(ack, response_vn(request_vn));
}

void Nic::rx_put(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) return;  // duplicate
    MatchResult found = match(*this, t);
    t.fail = found.fail;
    bool ptl_ack_wanted = t.ack_req != PTL_NO_ACK_REQ;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        if (!deliver_payload(t, entry.region(owner.rank->pid), t.offset_used)) t.fail = PTL_NI_SEGV;
        count_entry(owner, entry, t);
        ptl_ack_wanted = ptl_ack_wanted && !(entry.criteria.options & PTL_ME_ACK_DISABLE);
        // Matching, unlinking and the unexpected header are one instant: the event
        // writes below take simulated time, during which the program may append an entry
        // that must find the header (else the message is never claimed).
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));
        ptl_event_t event = target_event(PTL_EVENT_PUT, t, entry, *found.ni);
        record_unexpected(*found.ni, t, found.entry, event);
        auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
        if (comm_events_enabled(entry)) write_event(*this, owner, found.ni->table[t.pt_index].eq, event);
        auto_free_if_due(*this, owner, *found.ni, *found.entry);
    }
    queue_ack(transfer, ptl_ack_wanted, vn);
    if (found.entry && spec_.model_pci && message->size > 0) {
        sg4::this_actor::sleep_for(first_packet_wait(message->size));
        pci_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
    }
}

void Nic::rx_atomic(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) return;
    MatchResult found = match(*this, t);
    t.fail = found.fail;
    bool ptl_ack_wanted = t.ack_req != PTL_NO_ACK_REQ;
    AsyncPci write;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        if (!t.payload_readable || !apply_atomic(t.atomic_op, t.atomic_type, t.payload.get(),
                                                 entry.region(owner.rank->pid), t.offset_used, t.mlength, nullptr,
                                                 nullptr, 0))
            t.fail = PTL_NI_SEGV;
        count_entry(owner, entry, t);
        ptl_ack_wanted = ptl_ack_wanted && !(entry.criteria.options & PTL_ME_ACK_DISABLE);
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));  // as rx_put
        ptl_event_t event = target_event(PTL_EVENT_ATOMIC, t, entry, *found.ni);
        record_unexpected(*found.ni, t, found.entry, event);
        if (spec_.model_pci && message->size > 0) {
            write = AsyncPci::start_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
            sg4::this_actor::sleep_for(first_packet_wait(message->size));
        }
        queue_ack(transfer, ptl_ack_wanted, vn);
        auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
        if (comm_events_enabled(entry)) write_event(*this, owner, found.ni->table[t.pt_index].eq, event);
        auto_free_if_due(*this, owner, *found.ni, *found.entry);
    } else {
        // The specification's answer to an unmatched message, like an unmatched Put.
        queue_ack(transfer, ptl_ack_wanted, vn);
    }
    if (write) write.wait();
}

void Nic::rx_get(Message* message, VirtualNetwork vn, bool fetch_atomic)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) return;
    MatchResult found = match(*this, t);
    t.fail = found.fail;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        count_entry(owner, entry, t);
        bool ok = true;
        if (fetch_atomic) {
            RankRegion fetch = t.get_md.region(t.initiator->rank->pid);
            ok = t.payload_readable &&
                 apply_atomic(t.atomic_op, t.atomic_type, t.payload.get(), entry.region(owner.rank->pid),
                              t.offset_used, t.mlength, t.has_compare ? t.compare : nullptr, &fetch,
                              t.local_get_offset);
        } else {
            ok = copy_between_ranks(entry.region(owner.rank->pid), t.offset_used, t.md.region(t.initiator->rank->pid),
                                    t.local_offset, t.mlength);
        }
        if (!ok) t.fail = PTL_NI_SEGV;
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));  // as rx_put
        ptl_event_t event = target_event(fetch_atomic ? PTL_EVENT_FETCH_ATOMIC : PTL_EVENT_GET, t, entry, *found.ni);
        if (!fetch_atomic) event.hdr_data = 0;
        record_unexpected(*found.ni, t, found.entry, event);
        auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
        if (comm_events_enabled(entry)) {
            t.deferred_pending = true;
            t.target = &owner;
            t.target_eq = found.ni->table[t.pt_index].eq;
            t.deferred = event;
        }
        auto_free_if_due(*this, owner, *found.ni, *found.entry);
    }
    auto* response = new Message{fetch_atomic ? MessageType::FetchAtomicResponse : MessageType::GetResponse, transfer,
                                 found.entry ? t.mlength : 0, nid_, t.initiator_nid, t.kind};
    tx_queue(response_vn(vn)).push_detached(response);
}

void Nic::rx_response(Message* message)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created && t.state != TransferState::Received) return;
    t.state = TransferState::Answered;
    e2e_.acknowledge(t.request_record);
    AsyncPci write;
    if (spec_.model_pci && message->size > 0) {
        write = AsyncPci::start_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
        sg4::this_actor::sleep_for(first_packet_wait(message->size));
    }
    if (spec_.e2e) {
        auto* ack = new Message{MessageType::E2eAck, transfer, nic_model().timings().ack_size, nid_,
                                message->source_nid, message->type};
        send_e2e_ack(ack, response_vn(t.request_vn));
    }
    if (t.kind == MessageType::FetchAtomic) emit_send(*this, t);
    const MemoryDescriptor& md = t.kind == MessageType::Get ? t.md : t.get_md;
    if (md.options & PTL_MD_EVENT_CT_REPLY)
        count_event(*t.initiator, md.ct, (md.options & PTL_MD_EVENT_CT_BYTES) ? t.length : 1, t.fail != PTL_NI_OK);
    if (!(md.options & PTL_MD_EVENT_SUCCESS_DISABLE) || t.fail != PTL_NI_OK)
        write_event(*this, *t.initiator, md.eq, initiator_event(PTL_EVENT_REPLY, t, t.matched ? t.mlength : 0));
    if (write) write.wait();
}

void Nic::rx_ptl_ack(Message* message)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (spec_.e2e) {
        auto* ack = new Message{MessageType::E2eAck, transfer, nic_model().timings().ack_size, nid_,
                                message->source_nid, MessageType::PtlAck};
        send_e2e_ack(ack, response_vn(t.request_vn));
    }
    e2e_.acknowledge(t.request_record);
    if (t.state != TransferState::Created && t.state != TransferState::Received) return;
    t.state = TransferState::Answered;
    emit_send(*this, t);
    if (t.md.options & PTL_MD_EVENT_CT_ACK)
        count_event(*t.initiator, t.md.ct, (t.md.options & PTL_MD_EVENT_CT_BYTES) ? t.mlength : 1,
                    t.fail != PTL_NI_OK);
    if (t.ack_req == PTL_ACK_REQ && (!(t.md.options & PTL_MD_EVENT_SUCCESS_DISABLE) || t.fail != PTL_NI_OK))
        write_event(*this, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_ACK, t, t.matched ? t.mlength : 0));
}

void Nic::rx_e2e_ack(Message* message)
{
    Transfer& t = *message->transfer;
    switch (message->acknowledges) {
    case MessageType::GetResponse:
    case MessageType::FetchAtomicResponse:  // at the responder: the deferred target event
        e2e_.acknowledge(t.response_record);
        t.state = TransferState::Finished;
        if (t.deferred_pending) {
            t.deferred_pending = false;
            write_event(*this, *t.target, t.target_eq, t.deferred);
        }
        break;
    case MessageType::PtlAck:
        e2e_.acknowledge(t.response_record);
        t.state = TransferState::Finished;
        break;
    default:  // at the initiator: a Put or Atomic acknowledged without a Portals ACK
        e2e_.acknowledge(t.request_record);
        if (t.state == TransferState::Finished) break;
        t.state = TransferState::Finished;
        if (t.kind == MessageType::Put || t.kind == MessageType::Atomic) emit_send(*this, t);
        break;
    }
}

// ---------------------------------------------------------------------------------------

NicModel::NicModel(const PlatformSpec& spec, std::vector<NodeHosts> nodes) : spec_(spec)
{
    lone_.enable(spec.compute_lone_transfers);
    for (const LinkFailure& failure : spec.failures)
        if (sg4::Link* link = sg4::Link::by_name_or_null(failure.link)) lone_.never_compute_over(link);
    for (NodeHosts& node : nodes) {
        uint32_t nid = node.nid;
        index_of_nid_[nid] = nics_.size();
        nics_.push_back(std::make_unique<Nic>(nid, std::move(node), spec_));
    }
}

void NicModel::start()
{
    for (auto& nic : nics_) nic->start();
}

}  // namespace s4bxi::sim
