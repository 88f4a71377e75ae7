// Computed transfers: the lone-flow formula against SimGrid's own timing of the same
// transfer, and when a transfer may be computed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "engine_in_child.hpp"
#include "nic/lone_transfers.hpp"
#include "platform/config_override.hpp"
#include "platform/platform.hpp"

using namespace s4bxi::sim;
namespace sg4 = simgrid::s4u;

namespace {

// Simulates transfers of several sizes both ways between `a` and `b`, alone, and checks
// each against lone_flow(), whose latency and rate should be `latency` and `rate`.
void check_lone_flows(sg4::Host* a, sg4::Host* b, double latency, double rate)
{
    sg4::Actor::create("transfers", a, [=] {
        for (auto [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
            auto flow = lone_flow(from, to);
            expect(flow.has_value(), "a lone flow is derived");
            if (!flow) return;
            expect(near(flow->latency, latency), "latency");
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

// Over PCIe: between the last core and the NIC of node 0.
void check_pcie(const std::string& platform, double rate)
{
    PlatformSpec spec = parse_platform(platform, "p.toml");
    auto nodes = build_platform(spec);
    check_lone_flows(nodes[0].cores.back(), nodes[0].nic, spec.pcie_limiter_latency + spec.pcie_shared_latency, rate);
}

}  // namespace

TEST_CASE("a lone transfer takes the route's latency plus bytes over the lone-flow rate, as SimGrid times it")
{
    // PCIe: the limiter (a fat pipe) caps the flow; the shared bus with the flow's own
    // cross-traffic would allow 15.75e9 / 1.05.
    CHECK(in_child([] { check_pcie("[platform]\nnodes = 2\n", 11.1e9); }));
    // A slower shared bus: the flow's weight there is 1 + 0.05 for its reverse route.
    CHECK(in_child([] { check_pcie("[platform]\nnodes = 2\n[pcie]\nshared_bandwidth = 8e9\nlimiter_latency = 1e-7\n", 8e9 / 1.05); }));
    // Without cross-traffic, the shared bus gives all of its bandwidth.
    CHECK(in_child([] { check_pcie("[platform]\nnodes = 2\n[pcie]\nshared_bandwidth = 8e9\n", 8e9); },
                   {"--cfg=network/crosstraffic:0"}));
    // A small TCP window bounds the rate over the route's round trip.
    CHECK(in_child([] { check_pcie("[platform]\nnodes = 2\n", 1000.0 / (2 * 250e-9)); }, {"--cfg=network/TCP-gamma:1000"}));
    // Between NICs: both BXI links (shared), each with the flow's cross-traffic.
    CHECK(in_child([] {
        auto nodes = build_platform(parse_platform("[platform]\nnodes = 2\n", "p.toml"));
        check_lone_flows(nodes[0].nic, nodes[1].nic, 2 * 500e-9, 11.1e9 / 1.05);
    }));
    // Across a fat tree: the slower switch-to-switch links bound the flow, at their full
    // bandwidth: its way back crosses other ones (two parallel links up), not these.
    CHECK(in_child([] {
        auto nodes = build_platform(parse_platform("[platform]\ntopology = \"fat_tree\"\n[topology]\nparameters = "
                                                   "\"2;4,4;1,2;1,2\"\nlink_bandwidth = 5e9\nlink_latency = 1e-7\n",
                                                   "f.toml"));
        check_lone_flows(nodes[0].nic, nodes[15].nic, 2 * 500e-9 + 2 * 1e-7, 5e9);
    }));
}

TEST_CASE("a small transfer is computed only when it has its links to itself")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\nnodes = 2\n", "p.toml");
        auto nodes = build_platform(spec);
        sg4::Host* core = nodes[0].cores.front();
        sg4::Host* nic = nodes[0].nic;
        sg4::Host* other_nic = nodes[1].nic;
        sg4::Actor::create("links", core, [=] {
            const double latency = 250e-9;
            const double rate = 11.1e9;
            LoneTransfers lone;
            expect(!lone.computed_duration(core, nic, 64), "disabled: everything is simulated");
            lone.enable(true);
            expect(!lone.computed_duration(core, nic, LoneTransfers::kLargestComputed + 1), "too large to compute");
            auto first = lone.computed_duration(core, nic, 96);
            expect(first && near(*first, latency + 96 / rate), "alone: computed");
            // A second transfer now would share the first one's bandwidth phase, the other
            // way too (the same links), but not between the NICs (other links).
            expect(!lone.computed_duration(nic, core, 64), "overlapping bandwidth phases: simulated");
            expect(lone.computed_duration(nic, other_nic, 32).has_value(), "other links: computed");
            // Once its latency is paid, the second reaches the bus after the first left it.
            sg4::this_actor::sleep_for(96 / rate);
            auto second = lone.computed_duration(nic, core, 64);
            expect(second && near(*second, latency + 64 / rate), "after the first one's bandwidth phase: computed");
            sg4::this_actor::sleep_for(1e-6);
            lone.simulated_begins(other_nic, nic);
            expect(!lone.computed_duration(nic, other_nic, 8), "a simulated transfer holds its links, both ways");
            expect(lone.computed_duration(core, nic, 8).has_value(), "not the PCIe links");
            lone.simulated_ends(other_nic, nic);
            sg4::this_actor::sleep_for(1e-6);
            expect(lone.computed_duration(nic, other_nic, 8).has_value(), "free again");
            sg4::this_actor::sleep_for(1e-6);
            lone.never_compute_over(sg4::Link::by_name("node1_BXI"));
            expect(!lone.computed_duration(nic, other_nic, 8), "a link that may fail: simulated");
        });
        sg4::Engine::get_instance()->run();
    }));
}
