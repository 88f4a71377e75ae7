// The queues in front of the NIC engines: their messages, and command queues fed over PCIe.
#include "nic/nic_model.hpp"

#include <map>

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

void EngineQueue::push(Message* message)
{
    if (is_request(message->type) && message->transfer && message->transfer->ordered)
        return hand_over_in_order(message->source_nid, message->transfer->order, message);
    push_now(message);
}

void EngineQueue::skip(const Transfer& request)
{
    if (request.ordered) hand_over_in_order(request.initiator_nid, request.order, nullptr);
}

void EngineQueue::hand_over_in_order(uint32_t source, uint64_t order, Message* message)
{
    SourceOrder& from = in_order_[source];
    from.early.emplace(order, message);
    // A retransmission of a request already taken passes at once (the RX drops duplicates).
    while (!from.early.empty() && from.early.begin()->first <= from.taken) {
        auto first = from.early.begin();
        uint64_t order_of = first->first;
        Message* next = first->second;
        from.early.erase(first);
        if (order_of == from.taken && (from.early.empty() || from.early.begin()->first != order_of)) ++from.taken;
        if (next) push_now(next);
    }
}

void EngineQueue::push_now(Message* message)
{
    messages_.push_back(message);
    if (waiter_) instant_order().resume_at(sg4::Engine::get_clock(), owner_, std::exchange(waiter_, nullptr));
}

void EngineQueue::landed(uint64_t ticket, Message* message, std::function<void()> at_hand_over)
{
    Expected& slot = expected_.at(ticket - first_expected_);
    slot.landed = true;
    slot.message = message;
    slot.at_hand_over = std::move(at_hand_over);
    while (!expected_.empty() && expected_.front().landed) {
        Expected front = std::move(expected_.front());
        expected_.pop_front();
        ++first_expected_;
        if (front.at_hand_over) front.at_hand_over();
        if (front.message) push(front.message);
    }
}

Message* EngineQueue::Pop::await_resume()
{
    Message* message = queue.messages_.front();
    queue.messages_.pop_front();
    return message;
}

void CommandQueue::init(StepOwner owner, sg4::Host* nic_host, bool over_pcie)
{
    queue_.init(owner);
    nic_host_ = nic_host;
    over_pcie_ = over_pcie;
}

void CommandQueue::push_blocking(Message* message, uint64_t bytes)
{
    if (over_pcie_ && !message->transfer->flow) transfer(sg4::this_actor::get_host(), nic_host_, bytes).run_in_actor();
    queue_.push(message);
}

void CommandQueue::push_detached(Message* message)
{
    // From the NIC itself nothing crosses PCIe: straight into the queue. From a core (a
    // triggered operation fired by the program's counter update), the write's latency.
    if (!over_pcie_ || message->transfer->flow || in_nic_step()) {
        queue_.push(message);
        return;
    }
    sg4::CommPtr write = sg4::Comm::sendto_async(sg4::this_actor::get_host(), nic_host_, 0);
    uint64_t ticket = queue_.expect();
    when_ended(std::move(write), queue_.owner(), [this, message, ticket](bool failed) {
        if (!failed) return queue_.landed(ticket, message, nullptr);
        queue_.landed(ticket, nullptr, nullptr);
        delete message;  // lost on a link that went down on its way here
    });
}

}  // namespace s4bxi::sim
