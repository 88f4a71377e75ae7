// The queues in front of the NIC engines: arrivals, and command queues fed over PCIe.
#include "nic/nic_model.hpp"

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

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

}  // namespace s4bxi::sim
