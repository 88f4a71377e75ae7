// A platform plugin (docs/platforms.md): two nodes on one switch built with SimGrid's C++
// API, with the same links as s4bxi's own "switch" topology, so that runs on it can be
// compared with runs on the built-in builder.
#include <fmt/format.h>

#include <simgrid/s4u.hpp>

#include "platform/platform.hpp"

namespace sg4 = simgrid::s4u;
using s4bxi::sim::NodeHosts;
using s4bxi::sim::PlatformSpec;

extern "C" void s4bxi_load_platform(const PlatformSpec& spec, std::vector<NodeHosts>& nodes)
{
    if (spec.nodes != 2) throw std::runtime_error("this plugin builds exactly 2 nodes (platform.nodes = 2)");
    sg4::NetZone* zone = sg4::create_full_zone("plugin");
    std::vector<sg4::Link*> bxi;
    for (uint32_t index = 0; index < spec.nodes; ++index) {
        NodeHosts node;
        node.nid = spec.nid_of(index);
        node.name = fmt::format("node{}", node.nid);
        for (uint32_t core = 0; core < spec.cores_per_node; ++core)
            node.cores.push_back(zone->create_host(fmt::format("{}_CPU{}", node.name, core), spec.core_speed));
        node.nic = zone->create_host(node.name + "_NIC", 1e9);
        sg4::Link* limiter = zone->create_link(node.name + "_PCI_FAT", spec.pcie_limiter_bandwidth)
                                 ->set_latency(spec.pcie_limiter_latency)
                                 ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE)
                                 ->seal();
        sg4::Link* shared =
            zone->create_link(node.name + "_PCI", spec.pcie_shared_bandwidth)->set_latency(spec.pcie_shared_latency)->seal();
        for (sg4::Host* core : node.cores)
            zone->add_route(core->get_netpoint(), node.nic->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(limiter), sg4::LinkInRoute(shared)}, true);
        bxi.push_back(
            zone->create_link(node.name + "_BXI", spec.bxi_link_bandwidth)->set_latency(spec.bxi_link_latency)->seal());
        nodes.push_back(node);
    }
    zone->add_route(nodes[0].nic->get_netpoint(), nodes[1].nic->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(bxi[0]), sg4::LinkInRoute(bxi[1])}, true);
    zone->seal();
}
