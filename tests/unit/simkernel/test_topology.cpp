// Building the platform: routes, latencies and bandwidths of every topology, failures.
// SimGrid allows one engine per process, so every case builds its platform in a child
// (engine_in_child.hpp).
#include <catch2/catch.hpp>

#include <string>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "engine_in_child.hpp"
#include "platform/config_override.hpp"
#include "platform/platform.hpp"

using namespace s4bxi::sim;
namespace sg4 = simgrid::s4u;

namespace {

struct Route {
    std::vector<sg4::Link*> links;
    double latency = 0;
    std::vector<std::string> names() const
    {
        std::vector<std::string> out;
        for (auto* l : links) out.push_back(l->get_name());
        return out;
    }
};

Route route(sg4::Host* from, sg4::Host* to)
{
    Route r;
    from->route_to(to, r.links, &r.latency);
    return r;
}

}  // namespace

TEST_CASE("one switch: PCIe links in series, two BXI links between NICs")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\nnodes = 3\ncores_per_node = 2\n", "s.toml");
        auto nodes = build_platform(spec);
        expect(nodes.size() == 3 && nodes[2].name == "node2" && nodes[2].nid == 2, "three nodes");
        expect(nodes[1].cores.size() == 2 && nodes[1].cores[1]->get_name() == "node1_CPU1", "core names");
        expect(nodes[1].nic->get_name() == "node1_NIC", "NIC name");
        Route pci = route(nodes[1].cores[1], nodes[1].nic);
        expect(pci.names() == std::vector<std::string>{"node1_PCI_FAT", "node1_PCI"}, "PCIe route");
        expect(near(pci.latency, 250e-9), "PCIe latency");
        Route net = route(nodes[0].nic, nodes[2].nic);
        expect(net.names() == std::vector<std::string>{"node0_BXI", "node2_BXI"}, "NIC to NIC route");
        expect(near(net.latency, 1e-6), "NIC to NIC latency");
    }));
}

TEST_CASE("NIDs name the nodes")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\nnodes = 2\nnids = [42, 7]\n", "n.toml");
        auto nodes = build_platform(spec);
        expect(nodes[0].nid == 42 && nodes[0].name == "node42" && nodes[0].nic->get_name() == "node42_NIC", "node 0");
        expect(nodes[1].nid == 7 && nodes[1].cores[0]->get_name() == "node7_CPU0", "node 1");
        expect(route(nodes[0].nic, nodes[1].nic).names() == std::vector<std::string>{"node42_BXI", "node7_BXI"}, "route");
    }));
}

TEST_CASE("a one-level fat tree routes like one switch")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform(
            "[platform]\ntopology = \"fat_tree\"\n[topology]\nparameters = \"1;4;1;1\"\nlink_latency = 9e-6\n", "f.toml");
        auto nodes = build_platform(spec);
        expect(nodes.size() == 4, "four nodes");
        Route net = route(nodes[0].nic, nodes[3].nic);
        std::vector<std::string> names = net.names();
        expect(names.size() == 4 && names.front() == "node0_BXI" && names.back() == "node3_BXI", "BXI links at both ends");
        // The leaf links stand for the cables: BXI bandwidth, no latency of their own.
        expect(near(net.latency, 2 * spec.bxi_link_latency), "latency of two BXI links");
        for (auto* l : net.links) expect(l->get_bandwidth() == spec.bxi_link_bandwidth, l->get_name() + " bandwidth");
        Route pci = route(nodes[2].cores[3], nodes[2].nic);
        expect(pci.names() == std::vector<std::string>{"node2_PCI_FAT", "node2_PCI"}, "PCIe route");
        expect(route(nodes[1].nic, nodes[1].nic).links.size() <= 1, "loopback");
    }));
}

TEST_CASE("a two-level fat tree crosses switch-to-switch links with the [topology] parameters")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\ntopology = \"fat_tree\"\n[topology]\nparameters = \"2;4,4;1,2;1,2\"\n"
                                           "link_bandwidth = 2e10\nlink_latency = 1e-7\n",
                                           "f.toml");
        auto nodes = build_platform(spec);
        expect(nodes.size() == 16, "16 nodes");
        // Same leaf switch (nodes 0..3): BXI, leaf, leaf, BXI.
        Route near_route = route(nodes[0].nic, nodes[1].nic);
        expect(near_route.links.size() == 4 && near(near_route.latency, 1e-6), "same switch: two BXI links");
        // Another leaf switch: up to a top switch and down: two switch-to-switch links.
        Route far = route(nodes[0].nic, nodes[15].nic);
        expect(far.links.size() == 6, "other switch: 6 links, got " + std::to_string(far.links.size()));
        expect(near(far.latency, 1e-6 + 2e-7), "other switch latency");
        int fast = 0;
        for (auto* l : far.links) fast += l->get_bandwidth() == 2e10;
        expect(fast == 2, "two switch-to-switch links");
    }));
}

TEST_CASE("dragonfly: the node links change no timing, router links use [topology]")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\ntopology = \"dragonfly\"\ncores_per_node = 1\n[topology]\n"
                                           "parameters = \"3,1;2,1;3,1;2\"\nlink_latency = 1e-7\n",
                                           "d.toml");
        auto nodes = build_platform(spec);
        expect(nodes.size() == 36, "36 nodes");
        Route same_router = route(nodes[0].nic, nodes[1].nic);
        expect(near(same_router.latency, 1e-6), "same router: two BXI links");
        Route far = route(nodes[0].nic, nodes[35].nic);
        expect(near(far.latency, 1e-6 + 4e-7), "other group: BXI + 4 router links");
    }));
}

TEST_CASE("every pair of nodes has a route: BXI links at both ends, switch links in between")
{
    // The shipped files, and fat trees whose leaves have several parents or several links.
    for (std::string name : {"fat_tree_64", "dragonfly_example", "torus_example", "2;4,4;2,2;1,1", "2;4,4;1,2;2,1",
                             "3;2,2,2;1,2,2;1,1,2", "3,2;2,1;3,2;1", "torus 2,3,2"}) {
        INFO(name);
        CHECK(in_child([name] {
            PlatformSpec spec;
            if (name.find(';') == std::string::npos && name.find(' ') == std::string::npos)
                spec = load_platform_file(std::string(S4BXI_SOURCE_ROOT "/platforms/") + name + ".toml");
            else if (name.rfind("torus ", 0) == 0)
                spec = parse_platform("[platform]\ntopology = \"torus\"\ncores_per_node = 1\n[topology]\ndimensions = [" +
                                          name.substr(6) + "]\nlink_latency = 1e-7\n",
                                      "t.toml");
            else
                spec = parse_platform(std::string("[platform]\ntopology = \"") +
                                          (name.find(',') < name.find(';') ? "dragonfly" : "fat_tree") +
                                          "\"\ncores_per_node = 1\n[topology]\nparameters = \"" + name +
                                          "\"\nlink_latency = 1e-7\n",
                                      "t.toml");
            auto nodes = build_platform(spec);
            for (auto& a : nodes)
                for (auto& b : nodes) {
                    if (&a == &b) continue;
                    Route r = route(a.nic, b.nic);
                    auto names = r.names();
                    double hops = std::round((r.latency - 2 * spec.bxi_link_latency) / spec.switch_link_latency());
                    // Fat tree and dragonfly: SimGrid's leaf links next to the BXI links add nothing.
                    bool leaf_links_neutral = spec.topology == "torus" ||
                                              (r.links.size() >= 4 && r.links[1]->get_latency() == 0 &&
                                               r.links[r.links.size() - 2]->get_latency() == 0 &&
                                               r.links[1]->get_bandwidth() == spec.bxi_link_bandwidth);
                    size_t switch_links = 0;
                    for (auto* l : r.links) switch_links += l->get_latency() == spec.switch_link_latency();
                    if (names.front() != a.name + "_BXI" || names.back() != b.name + "_BXI" || hops < 0 ||
                        !leaf_links_neutral || switch_links != static_cast<size_t>(hops) ||
                        !near(r.latency, 2 * spec.bxi_link_latency + hops * spec.switch_link_latency())) {
                        expect(false, a.name + " -> " + b.name);
                        return;
                    }
                }
        }));
    }
}

TEST_CASE("torus: routers in a torus, one node on each")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\ntopology = \"torus\"\n[topology]\ndimensions = [4, 2]\n"
                                           "link_latency = 3e-7\n",
                                           "t.toml");
        auto nodes = build_platform(spec);
        expect(nodes.size() == 8, "8 nodes");
        Route next = route(nodes[0].nic, nodes[1].nic);
        expect(near(next.latency, 1e-6 + 3e-7), "neighbours: one torus link");
        Route opposite = route(nodes[0].nic, nodes[2].nic);
        expect(near(opposite.latency, 1e-6 + 2 * 3e-7), "two hops");
        expect(opposite.names().front() == "node0_BXI" && opposite.names().back() == "node2_BXI", "BXI at both ends");
    }));
}

TEST_CASE("a failure turns its link off, then on, at the given simulated times")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\nnodes = 2\n[[failure]]\nlink = \"node1_BXI\"\noff = 1e-3\non = 2e-3\n",
                                           "f.toml");
        auto nodes = build_platform(spec);
        std::vector<std::string> log;
        sg4::Actor::create("probe", nodes[0].nic, [&] {
            for (double at : {0.5e-3, 1.5e-3, 2.5e-3}) {
                sg4::this_actor::sleep_until(at);
                try {
                    sg4::Comm::sendto(nodes[0].nic, nodes[1].nic, 1000);
                    log.push_back("ok");
                } catch (const simgrid::NetworkFailureException&) {
                    log.push_back("failed");
                }
            }
        });
        sg4::Engine::get_instance()->run();
        expect(log == std::vector<std::string>{"ok", "failed", "ok"}, "off between 1 and 2 ms");
    }));
}

TEST_CASE("a failure on a cluster topology's BXI link")
{
    CHECK(in_child([] {
        PlatformSpec spec = parse_platform("[platform]\ntopology = \"torus\"\n[topology]\ndimensions = [2]\n"
                                           "[[failure]]\nlink = \"node1_BXI\"\noff = 0\n",
                                           "f.toml");
        auto nodes = build_platform(spec);
        bool failed = false;
        sg4::Actor::create("probe", nodes[0].nic, [&] {
            sg4::this_actor::sleep_for(1e-6);
            try {
                sg4::Comm::sendto(nodes[0].nic, nodes[1].nic, 1000);
            } catch (const simgrid::NetworkFailureException&) {
                failed = true;
            }
        });
        sg4::Engine::get_instance()->run();
        expect(failed, "node1_BXI is off from the start");
    }));
}
