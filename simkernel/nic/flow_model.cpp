// The flow model (network.model = flow, docs/network-models.md "The flow model"): each message is
// one network transfer on the platform's routes, sharing bandwidth as SimGrid's flows do,
// after a flat latency; no TX engine, PCIe, E2E or flow control. A NIC takes in messages
// one at a time (flow.gap apart, Nic::rx_loop) and sends its ACKs and responses one at a
// time (flow.answer_gap apart), as a LogGP model's gap. The destination handles each
// message with the detailed model's own code (matching, payload, events, counters), which
// the platform's switches (finalize_platform: no PCIe, no E2E) make cost no time: only the
// semantics are shared, never the timing.
#include "nic/nic_internal.hpp"

#include <algorithm>

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

using nic_detail::write_deferred_event;

NicTask<> Nic::flow_send(Message* message, VirtualNetwork vn)
{
    TransferPtr transfer = message->transfer;  // the message may be gone after the send
    Transfer& t = *transfer;
    MessageType type = message->type;
    bool request = is_request(type);
    if (request && !t.triggered) t.initiator->nis[t.ni_index].command_slots->release();
    if (!request) {  // ACKs and responses leave one at a time, flow.answer_gap apart
        double now = sg4::Engine::get_clock();
        double start = std::max(now, answers_free_at_);
        answers_free_at_ = start + spec_.flow_answer_gap;  // taken now: others may come meanwhile
        if (start > now) co_await delay(start - now);
    }
    if (message->size > spec_.flow_small_size) {
        // One payload at a time leaves a NIC's VN, as its TX engine reads them over PCIe
        // and sends them: a NIC's messages do not share its link to end together, the
        // first ends first (LogGP's gap, with G per byte).
        double now = sg4::Engine::get_clock();
        double& free_at = tx_free_at_[static_cast<int>(vn)];
        double start = std::max(now, free_at);
        free_at = start + spec_.flow_send_gap + message->size * spec_.flow_byte_gap;
        if (start > now) co_await delay(start - now);
    }
    co_await delay(message->size <= spec_.flow_small_size ? spec_.flow_small_latency : spec_.flow_latency);
    co_await network_send(message, vn, false, spec_.flow_bandwidth_factor);
    switch (type) {
    case MessageType::Put:
    case MessageType::Atomic:
        // Nothing comes back to wait for: the buffer is free once the message is on its way
        // (its payload was read at the call, capture_payload()).
        if (t.ack_req == PTL_NO_ACK_REQ) co_await emit_send(*this, t);
        break;
    case MessageType::GetResponse:
    case MessageType::FetchAtomicResponse:
        // The target's GET or FETCH_ATOMIC event, once its response is sent (as without E2E).
        co_await write_deferred_event(*this, t);
        break;
    default: break;
    }
}

// At the target, what goes back to the initiator of a Put or an Atomic: its Portals ACK,
// or, when it gets none (PTL_ME_ACK_DISABLE) and its SEND is still to come, a bare answer
// that brings the SEND (a payload read when it lands keeps the buffer until then).
NicTask<> Nic::flow_answer(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn)
{
    Transfer& t = *transfer;
    if (!ptl_ack && t.send_emitted) co_return;
    auto* answer = new Message{ptl_ack ? MessageType::PtlAck : MessageType::E2eAck, transfer,
                               nic_model().timings().ack_size, nid_, t.initiator_nid, t.kind};
    tx_queue(response_vn(request_vn)).push_detached(answer);
}

}  // namespace s4bxi::sim
