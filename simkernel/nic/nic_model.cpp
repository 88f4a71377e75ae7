#include "nic/nic_model.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <map>

#include <simgrid/kernel/Timer.hpp>

#include "nic/nic_internal.hpp"
#include "nic/payload_copy.hpp"
#include "observation/timeline.hpp"
#include "portals/atomics.hpp"
#include "portals/portals_engine.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/registry.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_nic, "The BXI NIC model");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;
using namespace nic_detail;

namespace {

NicModel* g_model = nullptr;

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

}  // namespace

NicModel& nic_model()
{
    return *g_model;
}

void set_nic_model(NicModel* model)
{
    g_model = model;
}

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
        observe::message_landed(*message);
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
    if (!spec_.e2e) write_deferred_event(*this, t);
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
        if (ptl_ack) emit_ack(initiator, t);
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
        if (comm_events_enabled(entry)) write_event(*this, owner, found.ni->table[t.pt_index].eq, event);
        auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
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
        if (comm_events_enabled(entry)) write_event(*this, owner, found.ni->table[t.pt_index].eq, event);
        auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
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
        // Counted once the operation is done, as rx_put and rx_atomic count: a count is
        // visible at once (a PtlCTWait read in the rank's mirror, a trigger it fires), and
        // the bytes of a fetching atomic must already be in the target's memory then.
        count_entry(owner, entry, t);
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));  // as rx_put
        ptl_event_t event = target_event(fetch_atomic ? PTL_EVENT_FETCH_ATOMIC : PTL_EVENT_GET, t, entry, *found.ni);
        if (!fetch_atomic) event.hdr_data = 0;
        record_unexpected(*found.ni, t, found.entry, event);
        if (comm_events_enabled(entry)) {  // written when the response is acknowledged, then the AUTO_UNLINK
            t.deferred_pending = true;
            t.target = &owner;
            t.target_eq = found.ni->table[t.pt_index].eq;
            t.deferred = event;
            if (unlink_event) t.deferred_unlink = found.entry;
            else auto_free_if_due(*this, owner, *found.ni, entry);
        } else {
            auto_unlink_event(*this, owner, *found.ni, entry, unlink_event);
        }
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
    // A Get from the rank itself: its target event (then the AUTO_UNLINK) comes before the
    // REPLY in the queue they share, as the target wrote it before sending the response.
    if (t.target == t.initiator) write_deferred_event(*this, t);
    const MemoryDescriptor& md = t.kind == MessageType::Get ? t.md : t.get_md;
    count_md_event(*t.initiator, md, PTL_MD_EVENT_CT_REPLY, t.mlength, t.fail);
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
    emit_ack(*this, t);
}

void Nic::rx_e2e_ack(Message* message)
{
    Transfer& t = *message->transfer;
    switch (message->acknowledges) {
    case MessageType::GetResponse:
    case MessageType::FetchAtomicResponse:  // at the responder: the deferred target event
        e2e_.acknowledge(t.response_record);
        t.state = TransferState::Finished;
        write_deferred_event(*this, t);
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
