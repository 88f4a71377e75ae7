#include "platform/unused_models.hpp"

#include <algorithm>

#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/s4u.hpp>

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

// SimGrid 3.32 goes through every model it has at every scheduling round and every time
// step, whatever the model holds: its done and failed actions after each round, its next
// event and the update of its actions at each step. Six models are there; the NIC model
// and the ranks' computations use two (the CPU and the network). The compound host model
// hands all its actions to those two, the VM model and its CPU model have nothing without
// virtual machines (the server creates none), and the disk model nothing without disks.
// Left in, those four were about a tenth of the server's instructions per message
// (docs/performance.md). Leaving them out of the engine's list changes nothing else: an
// empty model has no next event and no action to end, and the engine still owns it.
std::vector<std::string> leave_out_unused_models()
{
    sg4::Engine* engine = sg4::Engine::get_instance();
    // A platform plugin may give hosts disks, or make virtual machines: their models stay.
    bool disks = false;
    bool machines = false;
    for (sg4::Host* host : engine->get_all_hosts()) {
        disks |= !host->get_disks().empty();
        machines |= dynamic_cast<sg4::VirtualMachine*>(host) != nullptr;
    }
    auto unused = [disks, machines](const simgrid::kernel::resource::Model* model) {
        const std::string& name = model->get_name();
        return name == "Host_CLM03" || ((name == "VM_HL13" || name == "VmCpu_Cas01") && !machines) ||
               (name == "Disk" && !disks);
    };
    // The engine's own list: get_all_models() returns it by reference.
    auto& models = const_cast<std::vector<simgrid::kernel::resource::Model*>&>(engine->get_all_models());
    std::vector<std::string> left_out;
    for (const auto* model : models)
        if (unused(model)) left_out.push_back(model->get_name());
    models.erase(std::remove_if(models.begin(), models.end(), unused), models.end());
    return left_out;
}

}  // namespace s4bxi::sim
