// The PCIe bus's computed transfers: the lone-flow formula against SimGrid's own timing
// of the same transfer, and when the bus may compute one.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "config_override.hpp"
#include "engine_in_child.hpp"
#include "pcie_bus.hpp"
#include "platform.hpp"

using namespace s4bxi::sim;
namespace sg4 = simgrid::s4u;

namespace {

// Simulates transfers of several sizes both ways between a core and the NIC of node 0 of
// `platform`, alone, and checks each against lone_flow(); `rate` is the lone rate the
// platform's links should give.
void check_lone_flows(const std::string& platform, double rate)
{
    PlatformSpec spec = parse_platform(platform, "p.toml");
    auto nodes = build_platform(spec);
    sg4::Host* core = nodes[0].cores.back();
    sg4::Host* nic = nodes[0].nic;
    sg4::Actor::create("transfers", core, [=] {
        for (auto [from, to] : {std::pair{core, nic}, std::pair{nic, core}}) {
            auto flow = lone_flow(from, to);
            expect(flow.has_value(), "a lone flow is derived");
            if (!flow) return;
            expect(near(flow->latency, spec.pcie_limiter_latency + spec.pcie_shared_latency), "latency");
            expect(near(flow->rate, rate), "rate " + std::to_string(flow->rate) + " B/s, expected " + std::to_string(rate));
            for (uint64_t bytes : {0ul, 8ul, 64ul, 96ul, 128ul, 4096ul, 1ul << 20}) {
                double start = sg4::Engine::get_clock();
                sg4::Comm::sendto(from, to, bytes);
                double simulated = sg4::Engine::get_clock() - start;
                expect(near(simulated, flow->duration(bytes)),
                       std::to_string(bytes) + " B: simulated " + std::to_string(simulated * 1e9) + " ns, computed " +
                           std::to_string(flow->duration(bytes) * 1e9) + " ns");
            }
        }
    });
    sg4::Engine::get_instance()->run();
}

}  // namespace

TEST_CASE("a lone PCIe transfer takes the route's latency plus bytes over the lone-flow rate, as SimGrid times it")
{
    // The limiter (a fat pipe) caps the flow; the shared bus with its own cross-traffic
    // would allow 15.75e9 / 1.05.
    CHECK(in_child([] { check_lone_flows("[platform]\nnodes = 2\n", 11.1e9); }));
    // A slower shared bus: the flow's weight there is 1 + 0.05 for its reverse route.
    CHECK(in_child([] {
        check_lone_flows("[platform]\nnodes = 2\n[pcie]\nshared_bandwidth = 8e9\nlimiter_latency = 1e-7\n", 8e9 / 1.05);
    }));
    // Without cross-traffic, the shared bus gives all of its bandwidth.
    CHECK(in_child([] { check_lone_flows("[platform]\nnodes = 2\n[pcie]\nshared_bandwidth = 8e9\n", 8e9); },
                   {"--cfg=network/crosstraffic:0"}));
    // A small TCP window bounds the rate over the route's round trip.
    CHECK(in_child([] { check_lone_flows("[platform]\nnodes = 2\n", 1000.0 / (2 * 250e-9)); },
                   {"--cfg=network/TCP-gamma:1000"}));
}

TEST_CASE("the bus computes a small transfer only when it has the bus to itself")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\nnodes = 1\n", "p.toml");
        auto nodes = build_platform(spec);
        sg4::Host* core = nodes[0].cores.front();
        sg4::Host* nic = nodes[0].nic;
        sg4::Actor::create("bus", core, [=] {
            const double latency = 250e-9;
            const double rate = 11.1e9;
            PcieBus bus;
            expect(!bus.computed_duration(core, nic, 64), "a disabled bus simulates everything");
            bus.enable(true);
            expect(!bus.computed_duration(core, nic, PcieBus::kLargestComputed + 1), "too large to compute");
            auto first = bus.computed_duration(core, nic, 96);
            expect(first && near(*first, latency + 96 / rate), "alone: computed");
            // A second transfer now would share the first one's bandwidth phase.
            expect(!bus.computed_duration(nic, core, 64), "overlapping bandwidth phases: simulated");
            // Once its latency is paid, the second reaches the bus after the first left it.
            sg4::this_actor::sleep_for(96 / rate);
            auto second = bus.computed_duration(nic, core, 64);
            expect(second && near(*second, latency + 64 / rate), "after the first one's bandwidth phase: computed");
            sg4::this_actor::sleep_for(1e-6);
            bus.simulated_begins();
            expect(!bus.computed_duration(core, nic, 8), "a simulated transfer holds the bus");
            bus.simulated_ends();
            expect(bus.computed_duration(core, nic, 8).has_value(), "free again");
        });
        sg4::Engine::get_instance()->run();
    }));
}
