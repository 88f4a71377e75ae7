// The data calls: Put, Get, Atomic, FetchAtomic and Swap (their CPU side: command queue
// slot, PIO, the command write), triggered operations and their cancellation.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "calls/call.hpp"
#include "nic/message_hooks.hpp"
#include "portals/atomics.hpp"

namespace s4bxi::sim::engine {

// Validates a data operation (Put, Get, Atomic, FetchAtomic, Swap) and builds its
// transfer, without touching the initiator's memory yet.
int Call::prepare(MessageType kind, bool swap, const wire::FetchArgs& f, TransferPtr& out)
{
    bool fetch = kind == MessageType::FetchAtomic;
    const wire::DataArgs& a = f.data;
    MemoryDescriptor* m = md(a.md);
    if (!m) return PTL_ARG_INVALID;
    NetworkInterface& n = p_.nis[m->ni];
    MemoryDescriptor* get_md = nullptr;
    if (fetch) {
        get_md = md(f.get_md);
        if (!get_md || get_md->ni != m->ni) return PTL_ARG_INVALID;
        if (f.local_get_offset > get_md->length || a.length > get_md->length - f.local_get_offset) return PTL_ARG_INVALID;
        // An atomic operation that returns the prior value is an atomic operation:
        // max_atomic_size bounds it too (docs/model.md "NI limits").
        if (a.length > n.limits.max_fetch_atomic_size || a.length > n.limits.max_atomic_size) return PTL_ARG_INVALID;
        bool swap_op = a.atomic_op >= PTL_SWAP && a.atomic_op <= PTL_MSWAP;
        if (swap != swap_op || !operation_allowed(a.atomic_op, a.atomic_type)) return PTL_ARG_INVALID;
        size_t element = datatype_size(a.atomic_type);
        if (a.length % element != 0) return PTL_ARG_INVALID;
        if (swap && a.atomic_op != PTL_SWAP && a.length != element) return PTL_ARG_INVALID;  // one element
    }
    if (a.local_offset > m->length || a.length > m->length - a.local_offset) return PTL_ARG_INVALID;
    if (a.length > n.limits.max_msg_size) return PTL_ARG_INVALID;
    if (kind != MessageType::Get && !fetch) {
        if (a.ack_req > PTL_OC_ACK_REQ) return PTL_ARG_INVALID;
        // An acknowledgement needs somewhere to land: the reference implementation refuses
        // the call rather than dropping it (the specification leaves the checks to it).
        if (a.ack_req == PTL_ACK_REQ && m->eq == PTL_EQ_NONE) return PTL_ARG_INVALID;
        if (a.ack_req == PTL_CT_ACK_REQ && m->ct == PTL_CT_NONE) return PTL_ARG_INVALID;
    }
    // A volatile MD's payload is copied at the call: no more than the max_volatile_size the
    // program asked for (the reference implementation's check).
    if (n.volatile_limit && kind != MessageType::Get && (m->options & PTL_MD_VOLATILE) &&
        a.length > n.limits.max_volatile_size)
        return PTL_ARG_INVALID;
    if (a.pt_index > static_cast<uint32_t>(n.limits.max_pt_index)) return PTL_ARG_INVALID;
    if (kind == MessageType::Atomic) {
        if (!operation_allowed(a.atomic_op, a.atomic_type) || a.atomic_op >= PTL_SWAP) return PTL_ARG_INVALID;
        if (a.length > n.limits.max_atomic_size || a.length % datatype_size(a.atomic_type) != 0) return PTL_ARG_INVALID;
    }
    ptl_process_t target;
    std::memcpy(&target, &a.target, sizeof target);
    if (n.options & PTL_NI_LOGICAL) {  // rank -> (nid, pid) through the NI's map
        if (target.rank >= n.map.size()) return PTL_ARG_INVALID;
        target = n.map[target.rank];
    }
    if (!nic_model().has_nid(target.phys.nid)) return PTL_ARG_INVALID;

    auto t = std::make_shared<Transfer>();
    t->kind = kind;
    t->initiator = &p_;
    t->initiator_nid = p_.nid;
    t->initiator_pid = n.pid;
    t->request_vn = r_.service_mode ? VirtualNetwork::ServiceRequest : VirtualNetwork::ComputeRequest;
    t->flow = nic_model().models().current() == netmodel::Model::Flow;
    t->ni_index = n.index;
    t->matching = n.matching();
    t->md = *m;
    t->local_offset = a.local_offset;
    t->length = a.length;
    t->ack_req = kind == MessageType::Get || fetch ? PTL_NO_ACK_REQ : a.ack_req;
    t->target_nid = target.phys.nid;
    t->target_pid = target.phys.pid;
    t->pt_index = a.pt_index;
    t->match_bits = n.matching() ? a.match_bits : 0;
    t->remote_offset = a.remote_offset;
    t->user_ptr = a.user_ptr;
    t->hdr_data = a.hdr_data;
    t->atomic_op = a.atomic_op;
    t->atomic_type = a.atomic_type;
    if (fetch) {
        t->get_md = *get_md;
        t->local_get_offset = f.local_get_offset;
        t->has_compare = swap && a.atomic_op != PTL_SWAP;
        std::memcpy(t->compare, f.operand, sizeof t->compare);
    }
    out = std::move(t);
    return PTL_OK;
}

wire::FetchArgs Call::fetch_args(MessageType kind) const
{
    if (kind == MessageType::FetchAtomic) return args<wire::DataCommand>().fetch;
    wire::FetchArgs f{};
    f.data = args<wire::DataCommand>().fetch.data;
    return f;
}

// CPU side of Put, Get, Atomic, FetchAtomic and Swap (appendix §5.1 to §5.5).
int Call::data(MessageType kind, bool swap)
{
    TransferPtr t;
    if (int rc = prepare(kind, swap, fetch_args(kind), t); rc != PTL_OK) return rc;
    // A carried payload is the call's whole payload, or none (a malformed length reads nothing).
    const auto& command = args<wire::DataCommand>();
    const bool carried = command.carried_length > 0 && command.carried_length <= wire::kCarriedPayloadBytes &&
                         command.carried_length == t->length;
    stamp_order(*t);
    capture_payload(t, carried ? command.carried : nullptr);
    ++r_.portals_ops;
    ++r_.messages_sent;
    if (kind != MessageType::Get) r_.bytes_sent += t->length;
    g_message_hooks.issued(r_, *t);

    NetworkInterface& n = p_.nis[t->ni_index];
    r_.waiting_on = "a free slot in the NIC command queue";
    n.command_slots->acquire();
    const NicTimings& timing = nic_model().timings();
    uint64_t inline_bytes = inline_limit(t->matching);
    if (kind != MessageType::Get && !swap && switches_of(*t).pci && t->length > inline_bytes &&
        t->length <= pio_limit(t->matching) && (t->md.options & PTL_MD_VOLATILE)) {
        t->pio = true;
        if (kind == MessageType::Put) {
            detached_pci(nic().cpu0(), nic().hosts().nic, t->length - inline_bytes, trace::Op::PCI_PIO_PAYLOAD, p_.nid);
            sg4::this_actor::sleep_for(timing.cpu_after_pio);
        } else {
            pci_transfer(nic().cpu0(), nic().hosts().nic, t->length - inline_bytes, trace::Op::PCI_PIO_PAYLOAD, p_.nid)
                .run_in_actor();
        }
    }
    uint64_t network_size = kind == MessageType::Get ? timing.get_request_size : t->length;
    auto* message = new Message{kind, t, network_size, p_.nid, t->target_nid, kind};
    r_.waiting_on = "the PCIe command write";
    double command_start = sg4::Engine::get_clock();
    flow_command();
    nic().tx_queue(t->request_vn).push_blocking(message, timing.command_size);
    if (trace::enabled()) trace::record(trace::Op::PCI_COMMAND, p_.nid, p_.nid, command_start, sg4::Engine::get_clock());
    return PTL_OK;
}

// PtlTriggered*: the operation is registered with the NIC (one command write) and fires
// when the trigger counter reaches the threshold, which may be right away.
int Call::triggered()
{
    const auto& a = args<wire::TriggeredArgs>();
    Counter* trigger = ct(a.trigger_ct);
    if (!trigger) return PTL_ARG_INVALID;
    NetworkInterface& n = p_.nis[trigger->ni];
    uint64_t pending = 0;
    for (const auto& c : p_.cts) pending += c.triggers.size();
    if (pending >= static_cast<uint64_t>(n.limits.max_triggered_ops)) return PTL_NO_SPACE;
    std::function<void()> fire;
    RankPortals* owner = &p_;
    ListEntryPtr appended;  // PtlMEAppend: made now, linked by the trigger
    auto op = static_cast<wire::Op>(a.op);
    if (op == wire::Op::PtlCTInc || op == wire::Op::PtlCTSet) {
        Counter* target = ct(a.counter.ct);
        if (!target || target->ni != trigger->ni) return PTL_ARG_INVALID;
        if (op == wire::Op::PtlCTInc && a.counter.success != 0 && a.counter.failure != 0) return PTL_ARG_INVALID;
        uint32_t handle = a.counter.ct;
        ptl_ct_event_t value{a.counter.success, a.counter.failure};
        if (op == wire::Op::PtlCTInc)
            fire = [owner, handle, value] { count_event(*owner, handle, value.success, value.failure); };
        else
            fire = [owner, handle, value] { set_counter(*owner, handle, value); };
    } else if (op == wire::Op::PtlMEAppend) {
        NetworkInterface* target = ni(a.entry.ni);
        if (!target || target->index != trigger->ni) return PTL_ARG_INVALID;
        if (int rc = new_entry(a.entry, appended); rc != PTL_OK) return rc;  // its command write included
        appended->pending_append = true;
        out<wire::HandleReply>().handle = appended->handle;
        fire = [owner, appended] { append_triggered(*owner, appended); };
    } else if (op == wire::Op::PtlMEUnlink) {
        ListEntryPtr unlinked = list_entry(a.entry_handle);
        if (!unlinked || unlinked->ni != trigger->ni) return PTL_ARG_INVALID;
        fire = [owner, unlinked] { unlink_entry(*owner, owner->nis[unlinked->ni], unlinked); };
    } else {
        MessageType kind;
        bool swap = op == wire::Op::PtlSwap;
        switch (op) {
        case wire::Op::PtlPut: kind = MessageType::Put; break;
        case wire::Op::PtlGet: kind = MessageType::Get; break;
        case wire::Op::PtlAtomic: kind = MessageType::Atomic; break;
        case wire::Op::PtlFetchAtomic:
        case wire::Op::PtlSwap: kind = MessageType::FetchAtomic; break;
        default: return PTL_ARG_INVALID;
        }
        TransferPtr t;
        if (int rc = prepare(kind, swap, a.fetch, t); rc != PTL_OK) return rc;
        if (t->ni_index != trigger->ni) return PTL_ARG_INVALID;
        if (kind != MessageType::Get) r_.bytes_sent += t->length;
        ++r_.messages_sent;
        g_message_hooks.issued(r_, *t);
        fire = [t] { issue_triggered(t); };
    }
    ++r_.portals_ops;
    if (!appended) management_command();
    trigger = ct(a.trigger_ct);  // the command write let other actors run
    if (!trigger) {
        if (appended) unlink_entry(p_, p_.nis[appended->ni], appended);
        return PTL_ARG_INVALID;
    }
    trigger->triggers.push_back(Trigger{a.threshold, p_.triggers_registered++, std::move(fire)});
    count_event(p_, a.trigger_ct, 0, 0);  // fires now if the threshold is already reached
    return PTL_OK;
}

int Call::cancel_triggered()
{
    Counter* c = ct(args<wire::HandleArgs>().handle);
    if (!c) return PTL_ARG_INVALID;
    c->triggers.clear();
    return PTL_OK;
}
}  // namespace s4bxi::sim::engine
