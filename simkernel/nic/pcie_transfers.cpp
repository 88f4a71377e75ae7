// Transfers over PCIe and the network as the engines wait for them: computed when they have
// their links to themselves, simulated otherwise; the timings shared by the engines.
#include "nic/nic_model.hpp"

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

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

}  // namespace s4bxi::sim
