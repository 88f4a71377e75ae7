// When a payload is read from the initiator (at once, or when it lands), triggered
// operations issued by the NIC, and the SEND and failure events of the initiator.
#include <cstring>

#include "nic/nic_internal.hpp"
#include "run/registry.hpp"
#include "services/rank_region.hpp"

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

using nic_detail::initiator_event;

namespace {

// `carried`: the payload the rank copied into its command at the call, or null.
void read_payload_now(Transfer& t, const uint8_t* carried = nullptr)
{
    t.payload_at_delivery = false;
    t.payload = std::make_unique_for_overwrite<unsigned char[]>(t.length);
    if (carried) {
        std::memcpy(t.payload.get(), carried, t.length);
        t.payload_readable = true;
        return;
    }
    t.payload_readable =
        t.length == 0 || read_region(t.md.region(*t.initiator->rank), t.local_offset, t.payload.get(), t.length);
}

// A Put whose payload is still to be read from the initiator's memory when it lands.
bool read_when_it_lands(const Transfer& t)
{
    return t.payload_at_delivery && t.state == TransferState::Created;
}

}  // namespace

void capture_payload(const TransferPtr& transfer, const uint8_t* carried)
{
    Transfer& t = *transfer;
    if (t.kind == MessageType::Get) return;
    // A Put larger than the E2E context keeps the buffer until it is acknowledged (SEND
    // comes with the ACK, tx_put_like), so its bytes are still there when it lands.
    const PlatformSpec& spec = nic_model().spec();
    t.payload_at_delivery = t.kind == MessageType::Put && !(t.md.options & PTL_MD_VOLATILE) &&
                            t.length > spec.timings.e2e_context_size && (switches_of(t).e2e || t.ack_req != PTL_NO_ACK_REQ);
    if (!t.payload_at_delivery) {
        read_payload_now(t, carried);
        return;
    }
    auto& pending = t.initiator->payloads_in_memory;
    if (pending.size() >= 2 * t.initiator->payloads_in_memory_pruned + 64) {
        std::erase_if(pending, [](const std::weak_ptr<Transfer>& weak) {
            TransferPtr other = weak.lock();
            return !other || !read_when_it_lands(*other);
        });
        t.initiator->payloads_in_memory_pruned = pending.size();
    }
    pending.push_back(transfer);
}

void capture_pending_payloads(RankPortals& initiator)
{
    for (const auto& weak : initiator.payloads_in_memory)
        if (TransferPtr t = weak.lock(); t && read_when_it_lands(*t))
            read_payload_now(*t);
    initiator.payloads_in_memory.clear();
    initiator.payloads_in_memory_pruned = 0;
}

void issue_triggered(const TransferPtr& transfer)
{
    Transfer& t = *transfer;
    // It starts now, not when it was registered: the model of this instant.
    t.flow = nic_model().models().current() == netmodel::Model::Flow;
    stamp_order(t);
    capture_payload(transfer);
    t.triggered = true;
    uint64_t size = t.kind == MessageType::Get ? nic_model().timings().get_request_size : t.length;
    nic_model().nic(t.initiator_nid).tx_queue(t.request_vn).push_detached(
        new Message{t.kind, transfer, size, t.initiator_nid, t.target_nid, t.kind});
}

void stamp_order(Transfer& t)
{
    if (!t.flow && !nic_model().models().switching()) return;
    t.ordered = true;
    t.order = nic_model().nic(t.initiator_nid).next_order(t.target_nid, t.request_vn);
}

NicTask<> emit_send(Nic& nic, Transfer& t)
{
    if (t.send_emitted) co_return;
    t.send_emitted = true;
    // The NIC is done with the buffer: a success whatever the target makes of the message
    // (its answer is the ACK's), as the event says.
    count_md_event(*t.initiator, t.md, PTL_MD_EVENT_CT_SEND, t.length, PTL_NI_OK);
    if (t.md.options & (PTL_MD_EVENT_SEND_DISABLE | PTL_MD_EVENT_SUCCESS_DISABLE)) co_return;
    ptl_event_t event = initiator_event(PTL_EVENT_SEND, t, t.length);
    event.ni_fail_type = PTL_NI_OK;
    co_await write_event(nic, *t.initiator, t.md.eq, event, switches_of(t).pci_commands);
}

NicTask<> emit_ack(Nic& nic, Transfer& t)
{
    count_md_event(*t.initiator, t.md, PTL_MD_EVENT_CT_ACK, t.mlength, t.fail);
    if (t.ack_req == PTL_ACK_REQ && (!(t.md.options & PTL_MD_EVENT_SUCCESS_DISABLE) || t.fail != PTL_NI_OK))
        co_await write_event(nic, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_ACK, t, t.matched ? t.mlength : 0),
                              switches_of(t).pci_commands);
}

NicTask<> report_undeliverable(Nic& nic, Transfer& t)
{
    t.fail = PTL_NI_UNDELIVERABLE;
    t.state = TransferState::Finished;
    if (t.kind == MessageType::Get || t.kind == MessageType::FetchAtomic) {
        const MemoryDescriptor& md = t.kind == MessageType::Get ? t.md : t.get_md;
        count_md_event(*t.initiator, md, PTL_MD_EVENT_CT_REPLY, 0, t.fail);
        co_await write_event(nic, *t.initiator, md.eq, initiator_event(PTL_EVENT_REPLY, t, 0), switches_of(t).pci_commands);
        co_return;
    }
    if (!t.send_emitted) {  // the NIC no longer needs the buffer
        t.send_emitted = true;
        count_md_event(*t.initiator, t.md, PTL_MD_EVENT_CT_SEND, 0, t.fail);
        co_await write_event(nic, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_SEND, t, t.length),
                              switches_of(t).pci_commands);
    }
    if (t.ack_req == PTL_NO_ACK_REQ) co_return;
    count_md_event(*t.initiator, t.md, PTL_MD_EVENT_CT_ACK, 0, t.fail);
    if (t.ack_req == PTL_ACK_REQ)
        co_await write_event(nic, *t.initiator, t.md.eq, initiator_event(PTL_EVENT_ACK, t, 0), switches_of(t).pci_commands);
}

}  // namespace s4bxi::sim
