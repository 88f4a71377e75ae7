#include "nic/nic_model.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>


#include "nic/message_hooks.hpp"
#include "nic/nic_internal.hpp"
#include "nic/payload_copy.hpp"
#include "portals/atomics.hpp"
#include "run/registry.hpp"
#include "run/scheduling_hooks.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_nic, "The BXI NIC model");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;
using namespace nic_detail;

namespace {

NicModel* g_model = nullptr;

// A request lost on a link that E2E will not send again: its target must not wait for it.
bool lost_for_good(const Message& message)
{
    return is_request(message.type) && !message.transfer->request_record;
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
    for (uint32_t vn = 0; vn < 4; ++vn) {
        tx_[vn].init(StepOwner::of(nid, NicEngine::Tx, vn), hosts_.nic, spec.model_pci_commands);
        e2e_acks_[vn].init(StepOwner::of(nid, NicEngine::AckLane, vn), hosts_.nic, false);
        rx_[vn].init(StepOwner::of(nid, NicEngine::Rx, vn));
    }
}

void Nic::start()
{
    e2e_.start();
    // Compute and service VNs on every node (which ranks use the service VNs is known only
    // as they register; idle engines cost nothing). Each request VN comes with its response
    // VN, which carries the BXI ACKs' own lane (without E2E too: the bare ACK that brings
    // the SEND of a Put whose Portals ACK the target disabled, queue_ack). Each engine is a
    // coroutine that waits for its first message.
    for (VirtualNetwork request : {VirtualNetwork::ComputeRequest, VirtualNetwork::ServiceRequest}) {
        VirtualNetwork response = response_vn(request);
        for (VirtualNetwork vn : {request, response}) {
            spawn(tx_loop(vn));
            spawn(rx_loop(vn));
        }
        spawn(e2e_ack_loop(response));
    }
}

NicTask<> Nic::e2e_ack_loop(VirtualNetwork vn)
{
    while (true) {
        Message* ack = co_await e2e_acks_[static_cast<int>(vn)].pop();
        ++g_sim_activity;
        try {
            co_await tx_e2e_ack(ack, vn);
        } catch (const simgrid::NetworkFailureException&) {
            XBT_INFO("node %u: a BXI ACK was lost to a link that is down", nid_);
        }
    }
}

NicTask<> Nic::tx_loop(VirtualNetwork vn)
{
    while (true) {
        Message* message = co_await tx_queue(vn).pop();
        ++g_sim_activity;
        if (message->transfer->flow) {  // every message on its own, none waits for another
            spawn(flow_send(message, vn));
            continue;
        }
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
            case MessageType::FetchAtomic: co_await tx_put_like(message, vn); break;
            case MessageType::Get: co_await tx_get(message, vn); break;
            case MessageType::PtlAck: co_await tx_ptl_ack(message, vn); break;
            case MessageType::E2eAck: co_await tx_e2e_ack(message, vn); break;
            case MessageType::GetResponse:
            case MessageType::FetchAtomicResponse: co_await tx_response(message, vn); break;
            }
        } catch (const simgrid::NetworkFailureException&) {
            // A PCIe transfer of this message crossed a link that is down: the message is
            // lost, and E2E sends it again.
            XBT_INFO("node %u: a transfer failed on a link that is down; the message is lost", nid_);
        }
    }
}

NicTask<> Nic::rx_loop(VirtualNetwork vn)
{
    while (true) {
        Message* message = co_await rx_[static_cast<int>(vn)].pop();
        ++g_sim_activity;
        if (message->transfer->flow) {
            // The flow model's only time at the destination: a NIC takes in one message
            // at a time, flow.gap apart (two that land together are not seen by the
            // program at the same instant, and a stream is paced as the detailed model's
            // engines pace it). A message that finds the NIC free costs no step.
            double& free_at = rx_free_at_[static_cast<int>(vn)];
            if (double now = sg4::Engine::get_clock(); free_at > now) co_await delay(free_at - now);
            free_at = sg4::Engine::get_clock() + spec_.flow_gap + message->size * spec_.flow_byte_gap;
        }
        g_message_hooks.landed(*message);
        bool blocking_send = message->type == MessageType::Get || message->type == MessageType::PtlAck ||
                             message->type == MessageType::E2eAck;
        if (trace::enabled() && !blocking_send)  // until this RX takes it, as the reference traces
            trace::record(trace_op(message->type), message->source_nid, message->destination_nid, message->sent_at,
                          sg4::Engine::get_clock());
        try {
            switch (message->type) {
            case MessageType::Put: co_await rx_put(message, vn); break;
            case MessageType::Atomic: co_await rx_atomic(message, vn); break;
            case MessageType::Get: co_await rx_get(message, vn, false); break;
            case MessageType::FetchAtomic: co_await rx_get(message, vn, true); break;
            case MessageType::GetResponse:
            case MessageType::FetchAtomicResponse: co_await rx_response(message); break;
            case MessageType::PtlAck: co_await rx_ptl_ack(message); break;
            case MessageType::E2eAck: co_await rx_e2e_ack(message); break;
            }
        } catch (const simgrid::NetworkFailureException&) {
            XBT_INFO("node %u: a payload or event write failed on a link that is down", nid_);
        }
        delete message;
    }
}

// Before every network send: the 2 ns preparation, then the E2E registration (which may
// wait for a free entry). A retransmission keeps its first registration's entry.
NicTask<> Nic::prepare_send(Message* message, VirtualNetwork vn)
{
    co_await delay(nic_model().timings().send_preparation);
    Transfer& t = *message->transfer;
    bool request = is_request(message->type);
    if (message->type == MessageType::E2eAck) co_return;
    E2eRecordPtr& record = request ? t.request_record : t.response_record;
    // Named, not a temporary of the co_await: GCC 12 may destroy those twice (PR 100611).
    E2eRecordPtr previous;
    if (message->retries) previous = record;
    E2eRecordPtr registered = co_await e2e_.register_send(*message, vn, std::move(previous));
    record = std::move(registered);
}

// The message travels from this NIC to the destination's RX engine of the same VN. A
// message caught by a link failure is lost; E2E sends it again.
NicTask<> Nic::network_send(Message* message, VirtualNetwork vn, bool blocking, double bandwidth_share)
{
    nic_model().bytes_moved += message->size;
    // A share of the links' bandwidth is the same time as more bytes at full bandwidth.
    uint64_t wire_bytes = bandwidth_share == 1.0 ? message->size
                                                 : static_cast<uint64_t>(std::ceil(message->size / bandwidth_share));
    Nic& destination = nic_model().nic(message->destination_nid);
    sg4::Host* to = destination.hosts().nic;
    message->sent_at = sg4::Engine::get_clock();
    EngineQueue* arrivals = &destination.rx_[static_cast<int>(vn)];
    if (blocking) {
        // Traced here, from before the send preparation to the transfer's end: the
        // receiver may free the message as soon as it has it. The sender waits for the
        // transfer, then hands the message over itself.
        trace::Op op = trace_op(message->type);
        uint32_t from = nid_, to_nid = message->destination_nid;
        double start = message->sent_at - nic_model().timings().send_preparation;
        try {
            co_await transfer(hosts_.nic, to, wire_bytes);
        } catch (const simgrid::NetworkFailureException&) {
            XBT_INFO("node %u: a message to node %u was lost to a link failure", nid_, to_nid);
            if (lost_for_good(*message)) arrivals->skip(*message->transfer);
            delete message;
            co_return;
        }
        arrivals->push(message);
        if (trace::enabled()) trace::record(op, from, to_nid, start, sg4::Engine::get_clock());
        co_return;
    }
    LoneTransfers& lone = nic_model().lone_transfers();
    if (auto computed = lone.computed_duration(hosts_.nic, to, wire_bytes)) {
        // Nobody waits for it: a step of the destination's RX takes it when it lands.
        instant_order().at(message->sent_at + *computed, arrivals->owner(), [arrivals, message] { arrivals->push(message); });
        co_return;
    }
    // Its links count it until its RX takes it, in the order the messages were sent.
    lone.simulated_begins(hosts_.nic, to);
    sg4::Host* from = hosts_.nic;
    uint32_t source = nid_;
    uint64_t ticket = arrivals->expect();
    when_ended(sg4::Comm::sendto_async(from, to, wire_bytes), arrivals->owner(),
               [arrivals, message, from, to, source, ticket](bool failed) {
                   auto landed = [from, to] { nic_model().lone_transfers().simulated_ends(from, to); };
                   if (!failed) return arrivals->landed(ticket, message, landed);
                   XBT_INFO("node %u: a message to node %u was lost to a link failure", source, message->destination_nid);
                   arrivals->landed(ticket, nullptr, landed);
                   if (lost_for_good(*message)) arrivals->skip(*message->transfer);
                   delete message;
               });
}

NicTask<> Nic::tx_put_like(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;  // the message may be gone after the send
    Transfer& t = *transfer;
    const NicTimings& timing = nic_model().timings();
    bool first = message->retries == 0;
    if (first && !t.triggered) t.initiator->nis[t.ni_index].command_slots->release();
    co_await prepare_send(message, vn);
    // A retransmission reads the payload again only if it did not fit the E2E context.
    bool dma = spec_.model_pci && (first ? !t.pio && t.length > inline_limit(t.matching) : t.length > timing.e2e_context_size);
    AsyncPci dma_read;
    if (dma) {
        co_await pci_transfer(hosts_.nic, cpu0(), timing.dma_request_size, trace::Op::PCI_DMA_REQUEST, nid_);
        dma_read = AsyncPci::start_transfer(cpu0(), hosts_.nic, t.length - inline_limit(t.matching),
                                            trace::Op::PCI_DMA_PAYLOAD, nid_);
        co_await delay(first_packet_wait(t.length));
    }
    co_await network_send(message, vn, false);
    if (dma) co_await dma_read.wait();
    else co_await delay(timing.tx_after_put_no_dma);
    // Up to the E2E context size the NIC keeps the payload: SEND right away. Without E2E
    // and without any ACK, the buffer is free once the DMA read is over.
    bool no_ack_at_all = !spec_.e2e && t.ack_req == PTL_NO_ACK_REQ && t.kind != MessageType::FetchAtomic;
    if (first && (t.length <= timing.e2e_context_size || no_ack_at_all)) co_await emit_send(*this, t);
}

NicTask<> Nic::tx_get(Message* message, VirtualNetwork vn)
{
    Transfer& t = *message->transfer;
    if (message->retries == 0 && !t.triggered) t.initiator->nis[t.ni_index].command_slots->release();
    co_await prepare_send(message, vn);
    co_await network_send(message, vn, true);
    co_await delay(nic_model().timings().tx_after_get);
}

NicTask<> Nic::tx_ptl_ack(Message* message, VirtualNetwork vn)
{
    co_await prepare_send(message, vn);
    co_await network_send(message, vn, true);
    co_await delay(nic_model().timings().tx_after_ptl_ack);
}

NicTask<> Nic::tx_e2e_ack(Message* message, VirtualNetwork vn)
{
    co_await prepare_send(message, vn);
    co_await network_send(message, vn, true);
}

NicTask<> Nic::tx_response(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;  // the message may be gone after the send
    Transfer& t = *transfer;
    const NicTimings& timing = nic_model().timings();
    co_await prepare_send(message, vn);
    if (spec_.model_pci && message->size > 0) {  // responses always use DMA
        co_await pci_transfer(hosts_.nic, cpu0(), timing.dma_request_size, trace::Op::PCI_DMA_REQUEST, nid_);
        AsyncPci dma_read =
            AsyncPci::start_transfer(cpu0(), hosts_.nic, message->size, trace::Op::PCI_DMA_PAYLOAD, nid_);
        co_await delay(first_packet_wait(message->size));
        co_await network_send(message, vn, false);
        co_await dma_read.wait();
    } else {
        co_await network_send(message, vn, false);
        co_await delay(timing.tx_after_response_no_dma);
    }
    if (!spec_.e2e) co_await write_deferred_event(*this, t);
}

// ACK step at the target (appendix §5.1 step 4): a PTL ACK when the initiator asked for
// one, otherwise a bare BXI ACK when E2E is on. Without E2E, a bare ACK still goes back for
// a Put or Atomic that asked for an ACK the target's entry disables (PTL_ME_ACK_DISABLE):
// the initiator kept its buffer for that ACK (a payload over the E2E context is read when
// it lands, capture_payload), and its SEND comes with the answer.
NicTask<> Nic::queue_ack(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn)
{
    if (transfer->flow) {
        co_await flow_answer(transfer, ptl_ack, request_vn);
        co_return;
    }
    bool send_owed = !transfer->send_emitted && transfer->ack_req != PTL_NO_ACK_REQ;
    if (!ptl_ack && !spec_.e2e && !send_owed) co_return;
    if (spec_.quick_acks) {  // appendix §7.2: nothing on the network; this RX does the initiator's part
        Transfer& t = *transfer;
        Nic& initiator = nic_model().nic(t.initiator_nid);
        t.state = TransferState::Finished;
        initiator.e2e().acknowledge(t.request_record);
        co_await emit_send(initiator, t);
        if (ptl_ack) co_await emit_ack(initiator, t);
        co_return;
    }
    auto* ack = new Message{ptl_ack ? MessageType::PtlAck : MessageType::E2eAck, transfer,
                            nic_model().timings().ack_size, nid_, transfer->initiator_nid, transfer->kind};
    if (ptl_ack) tx_queue(response_vn(request_vn)).push_detached(ack);
    else send_e2e_ack(ack, response_vn(request_vn));
}

NicTask<> Nic::rx_put(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) co_return;  // duplicate
    MatchResult found = co_await match(*this, t);
    t.fail = found.fail;
    bool ptl_ack_wanted = t.ack_req != PTL_NO_ACK_REQ;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        if (!deliver_payload(t, entry.region(*owner.rank), t.offset_used)) t.fail = PTL_NI_SEGV;
        count_entry(owner, entry, t);
        ptl_ack_wanted = ptl_ack_wanted && !(entry.criteria.options & PTL_ME_ACK_DISABLE);
        // Matching, unlinking and the unexpected header are one instant: the event
        // writes below take simulated time, during which the program may append an entry
        // that must find the header (else the message is never claimed).
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));
        ptl_event_t event = target_event(PTL_EVENT_PUT, t, entry, *found.ni);
        record_unexpected(*found.ni, t, found.entry, event);
        if (comm_events_enabled(entry))
            co_await write_event(*this, owner, found.ni->table[t.pt_index].eq, event, switches_of(t).pci_commands);
        co_await auto_unlink_event(*this, owner, *found.ni, entry, unlink_event, switches_of(t).pci_commands);
    }
    co_await queue_ack(transfer, ptl_ack_wanted, vn);
    if (found.entry && switches_of(t).pci && message->size > 0) {
        co_await delay(first_packet_wait(message->size));
        co_await pci_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
    }
}

NicTask<> Nic::rx_atomic(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) co_return;
    MatchResult found = co_await match(*this, t);
    t.fail = found.fail;
    bool ptl_ack_wanted = t.ack_req != PTL_NO_ACK_REQ;
    AsyncPci write;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        if (!t.payload_readable || !apply_atomic(t.atomic_op, t.atomic_type, t.payload.get(),
                                                 entry.region(*owner.rank), t.offset_used, t.mlength, nullptr,
                                                 nullptr, 0))
            t.fail = PTL_NI_SEGV;
        count_entry(owner, entry, t);
        ptl_ack_wanted = ptl_ack_wanted && !(entry.criteria.options & PTL_ME_ACK_DISABLE);
        bool unlink_event = auto_unlink(owner, *found.ni, found.entry, consume(found.entry, t));  // as rx_put
        ptl_event_t event = target_event(PTL_EVENT_ATOMIC, t, entry, *found.ni);
        record_unexpected(*found.ni, t, found.entry, event);
        if (switches_of(t).pci && message->size > 0) {
            write = AsyncPci::start_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
            co_await delay(first_packet_wait(message->size));
        }
        co_await queue_ack(transfer, ptl_ack_wanted, vn);
        if (comm_events_enabled(entry))
            co_await write_event(*this, owner, found.ni->table[t.pt_index].eq, event, switches_of(t).pci_commands);
        co_await auto_unlink_event(*this, owner, *found.ni, entry, unlink_event, switches_of(t).pci_commands);
    } else {
        // The specification's answer to an unmatched message, like an unmatched Put.
        co_await queue_ack(transfer, ptl_ack_wanted, vn);
    }
    if (write) co_await write.wait();
}

NicTask<> Nic::rx_get(Message* message, VirtualNetwork vn, bool fetch_atomic)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created) co_return;
    MatchResult found = co_await match(*this, t);
    t.fail = found.fail;
    if (found.entry) {
        ListEntry& entry = *found.entry;
        RankPortals& owner = *found.ni->owner;
        t.state = TransferState::Received;
        t.matched = true;
        bool ok = true;
        if (fetch_atomic) {
            RankRegion fetch = t.get_md.region(*t.initiator->rank);
            ok = t.payload_readable &&
                 apply_atomic(t.atomic_op, t.atomic_type, t.payload.get(), entry.region(*owner.rank),
                              t.offset_used, t.mlength, t.has_compare ? t.compare : nullptr, &fetch,
                              t.local_get_offset);
        } else {
            ok = copy_between_ranks(entry.region(*owner.rank), t.offset_used, t.md.region(*t.initiator->rank),
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
            else co_await auto_free_if_due(*this, owner, *found.ni, entry, switches_of(t).pci_commands);
        } else {
            co_await auto_unlink_event(*this, owner, *found.ni, entry, unlink_event, switches_of(t).pci_commands);
        }
    }
    auto* response = new Message{fetch_atomic ? MessageType::FetchAtomicResponse : MessageType::GetResponse, transfer,
                                 found.entry ? t.mlength : 0, nid_, t.initiator_nid, t.kind};
    tx_queue(response_vn(vn)).push_detached(response);
}

NicTask<> Nic::rx_response(Message* message)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (t.state != TransferState::Created && t.state != TransferState::Received) co_return;
    t.state = TransferState::Answered;
    e2e_.acknowledge(t.request_record);
    AsyncPci write;
    if (switches_of(t).pci && message->size > 0) {
        write = AsyncPci::start_transfer(hosts_.nic, cpu0(), message->size, trace::Op::PCI_PAYLOAD_WRITE, nid_);
        co_await delay(first_packet_wait(message->size));
    }
    if (switches_of(t).e2e) {
        auto* ack = new Message{MessageType::E2eAck, transfer, nic_model().timings().ack_size, nid_,
                                message->source_nid, message->type};
        send_e2e_ack(ack, response_vn(t.request_vn));
    }
    if (t.kind == MessageType::FetchAtomic) co_await emit_send(*this, t);
    // A Get from the rank itself: its target event (then the AUTO_UNLINK) comes before the
    // REPLY in the queue they share, as the target wrote it before sending the response.
    if (t.target == t.initiator) co_await write_deferred_event(*this, t);
    const MemoryDescriptor& md = t.kind == MessageType::Get ? t.md : t.get_md;
    count_md_event(*t.initiator, md, PTL_MD_EVENT_CT_REPLY, t.mlength, t.fail);
    if (!(md.options & PTL_MD_EVENT_SUCCESS_DISABLE) || t.fail != PTL_NI_OK)
        co_await write_event(*this, *t.initiator, md.eq, initiator_event(PTL_EVENT_REPLY, t, t.matched ? t.mlength : 0),
                             switches_of(t).pci_commands);
    if (write) co_await write.wait();
}

NicTask<> Nic::rx_ptl_ack(Message* message)
{
    TransferPtr transfer = message->transfer;
    Transfer& t = *transfer;
    if (switches_of(t).e2e) {
        auto* ack = new Message{MessageType::E2eAck, transfer, nic_model().timings().ack_size, nid_,
                                message->source_nid, MessageType::PtlAck};
        send_e2e_ack(ack, response_vn(t.request_vn));
    }
    e2e_.acknowledge(t.request_record);
    if (t.state != TransferState::Created && t.state != TransferState::Received) co_return;
    t.state = TransferState::Answered;
    co_await emit_send(*this, t);
    co_await emit_ack(*this, t);
}

NicTask<> Nic::rx_e2e_ack(Message* message)
{
    Transfer& t = *message->transfer;
    switch (message->acknowledges) {
    case MessageType::GetResponse:
    case MessageType::FetchAtomicResponse:  // at the responder: the deferred target event
        e2e_.acknowledge(t.response_record);
        t.state = TransferState::Finished;
        co_await write_deferred_event(*this, t);
        break;
    case MessageType::PtlAck:
        e2e_.acknowledge(t.response_record);
        t.state = TransferState::Finished;
        break;
    default:  // at the initiator: a Put or Atomic acknowledged without a Portals ACK
        e2e_.acknowledge(t.request_record);
        if (t.state == TransferState::Finished) break;
        t.state = TransferState::Finished;
        if (t.kind == MessageType::Put || t.kind == MessageType::Atomic) co_await emit_send(*this, t);
        break;
    }
}

// ---------------------------------------------------------------------------------------

NicModel::NicModel(const PlatformSpec& spec, std::vector<NodeHosts> nodes) : spec_(spec)
{
    instant_order().reset();
    forget_transfer_watchers();
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
    // Daemons are killed when the last rank ends: the NIC's steps still due then (a BXI ACK
    // on its way) are not done, and leave no timer to drag simulated time on.
    auto watch = sg4::Actor::create("nic_steps", nics_.front()->hosts().nic, [] { sg4::Semaphore::create(0)->acquire(); });
    watch->daemonize();
    watch->on_exit([](bool) { instant_order().stop(); });
}

}  // namespace s4bxi::sim
