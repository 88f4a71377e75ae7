// The SimGrid models the server leaves out of the engine's rounds, and that simulated
// times do not move without them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/s4u.hpp>

#include "engine_in_child.hpp"
#include "nic/lone_transfers.hpp"
#include "platform/platform.hpp"
#include "platform/unused_models.hpp"

using namespace s4bxi::sim;
namespace sg4 = simgrid::s4u;

namespace {

std::vector<std::string> model_names()
{
    std::vector<std::string> names;
    for (const auto* model : sg4::Engine::get_instance()->get_all_models()) names.push_back(model->get_name());
    std::sort(names.begin(), names.end());
    return names;
}

std::string joined(const std::vector<std::string>& names)
{
    std::string text;
    for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
    return text;
}

}  // namespace

TEST_CASE("the engine keeps only the CPU and network models, and times sleeps, executions and flows as before")
{
    CHECK(in_child([] {
        auto nodes = build_platform(parse_platform("[platform]\nnodes = 2\n", "p.toml"));
        std::vector<std::string> left_out = leave_out_unused_models();
        std::sort(left_out.begin(), left_out.end());
        expect(joined(left_out) == "Disk, Host_CLM03, VM_HL13, VmCpu_Cas01", "left out: " + joined(left_out));
        expect(joined(model_names()) == "Cpu_Cas01, Network_CM02", "kept: " + joined(model_names()));
        sg4::Host* core = nodes[0].cores.front();
        sg4::Host* nic = nodes[0].nic;
        auto flow = lone_flow(core, nic);
        expect(flow.has_value(), "a lone flow is derived");
        sg4::Actor::create("timed", core, [=] {
            double start = sg4::Engine::get_clock();
            sg4::this_actor::sleep_for(1.5e-6);
            expect(sg4::Engine::get_clock() - start == 1.5e-6, "a sleep of 1.5 us");
            start = sg4::Engine::get_clock();
            sg4::this_actor::execute(core->get_speed() * 2e-6);
            expect(near(sg4::Engine::get_clock() - start, 2e-6), "an execution of 2 us of the core's speed");
            start = sg4::Engine::get_clock();
            sg4::Comm::sendto(core, nic, 4096);
            if (flow) expect(near(sg4::Engine::get_clock() - start, flow->duration(4096)), "a flow of 4 KiB");
        });
        sg4::Engine::get_instance()->run();
        expect(near(sg4::Engine::get_clock(), 3.5e-6 + (flow ? flow->duration(4096) : 0)), "the run's end");
    }));
}

TEST_CASE("a platform with a disk keeps the disk model")
{
    CHECK(in_child([] {
        auto nodes = build_platform(parse_platform("[platform]\nnodes = 1\n", "p.toml"));
        nodes[0].nic->create_disk("scratch", 1e9, 1e9);
        std::vector<std::string> left_out = leave_out_unused_models();
        expect(std::find(left_out.begin(), left_out.end(), "Disk") == left_out.end(), "Disk kept");
        auto kept = model_names();
        expect(std::find(kept.begin(), kept.end(), "Disk") != kept.end(), "Disk among " + joined(kept));
    }));
}

TEST_CASE("a platform with a virtual machine keeps the VM models")
{
    CHECK(in_child([] {
        auto nodes = build_platform(parse_platform("[platform]\nnodes = 1\n", "p.toml"));
        nodes[0].cores.front()->create_vm("vm", 1);
        std::vector<std::string> left_out = leave_out_unused_models();
        std::sort(left_out.begin(), left_out.end());
        expect(joined(left_out) == "Disk, Host_CLM03", "left out: " + joined(left_out));
        auto kept = model_names();
        expect(std::find(kept.begin(), kept.end(), "VM_HL13") != kept.end(), "VM_HL13 among " + joined(kept));
        expect(std::find(kept.begin(), kept.end(), "VmCpu_Cas01") != kept.end(), "VmCpu_Cas01 among " + joined(kept));
    }));
}
