// Events and counts written into a rank's queues and counters, and the triggered
// operations a count fires.
#include <algorithm>

#include "nic/nic_internal.hpp"
#include "run/registry.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(s4bxi_nic);

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace nic_detail {

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

}  // namespace nic_detail

using nic_detail::delivery_latency;
using nic_detail::note_arrival;

NicTask<> auto_free_if_due(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry, bool over_pcie)
{
    if (!entry.free_pending || entry.headers > 0) co_return;
    entry.free_pending = false;
    co_await write_entry_event(nic, owner, ni, entry, PTL_EVENT_AUTO_FREE, over_pcie);
}

NicTask<> write_entry_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, const ListEntry& entry,
                            ptl_event_kind_t type, bool over_pcie)
{
    ptl_event_t event{};
    event.type = type;
    event.user_ptr = reinterpret_cast<void*>(entry.user_ptr);
    event.pt_index = entry.pt_index;
    event.ptl_list = entry.list;
    event.ni_fail_type = PTL_NI_OK;
    co_await write_event(nic, owner, ni.table[entry.pt_index].eq, event, over_pcie);
}

namespace {

ModelSwitches switches_of_model(bool flow)
{
    if (flow) return {};
    const PlatformSpec& spec = nic_model().spec();
    return {.e2e = spec.e2e, .pci = spec.model_pci, .pci_commands = spec.model_pci_commands};
}

}  // namespace

ModelSwitches switches_of(const Transfer& t)
{
    return switches_of_model(t.flow);
}

ModelSwitches switches_now()
{
    return switches_of_model(nic_model().models().current() == netmodel::Model::Flow);
}

NicTask<> write_event(Nic& nic, RankPortals& owner, uint32_t eq_handle, ptl_event_t event, bool over_pcie)
{
    if (eq_handle == PTL_EQ_NONE) co_return;
    uint32_t index = handle_index(eq_handle);
    if (index >= owner.eqs.size() || !owner.eqs[index].used) co_return;  // freed meanwhile
    if (over_pcie)
        co_await pci_transfer(nic.hosts().nic, nic.cpu0(), nic_model().timings().event_size, trace::Op::PCI_EVENT,
                              nic.nid());
    // Freed during the write?
    if (index >= owner.eqs.size() || !owner.eqs[index].used) co_return;
    EventQueue& eq = owner.eqs[index];
    XBT_DEBUG("rank %d: event %d (ni_fail %d) in eq %#x", owner.rank->rank, static_cast<int>(event.type),
              static_cast<int>(event.ni_fail_type), eq_handle);
    // The host of the engine that writes it: a quick ACK's events are the target's RX's.
    sg4::Host* writer = in_nic_step() ? nic_model().nic(instant_order().current().node).hosts().nic
                                      : sg4::this_actor::get_host();
    double visible = sg4::Engine::get_clock() + delivery_latency(writer, owner);
    if (!eq.push({visible, event})) co_return;
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
        // Specification, "Triggered Operations": the count is the sum of the success and
        // failure fields (docs/model.md "Counting events").
        const ptl_ct_event_t& value = owner.cts[index].value;
        if (due == triggers.end() || due->threshold > value.success + value.failure) return;
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

void count_completion(RankPortals& owner, uint32_t ct_handle, bool count_bytes, uint64_t bytes, ptl_ni_fail_t fail)
{
    if (fail != PTL_NI_OK) count_event(owner, ct_handle, 0, 1);
    else count_event(owner, ct_handle, count_bytes ? bytes : 1, 0);
}

void count_md_event(RankPortals& owner, const MemoryDescriptor& md, uint32_t which, uint64_t bytes, ptl_ni_fail_t fail)
{
    if (md.options & which) count_completion(owner, md.ct, md.options & PTL_MD_EVENT_CT_BYTES, bytes, fail);
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

}  // namespace s4bxi::sim
