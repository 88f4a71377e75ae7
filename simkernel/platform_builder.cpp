#include <fmt/format.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <toml++/toml.h>

#include "platform.hpp"

namespace s4bxi::sim {

extern const char kDefaultPlatformToml[];

namespace {

namespace sg4 = simgrid::s4u;

class StrictReader {
public:
    StrictReader(const toml::table& root, std::string source) : root_(root), source_(std::move(source)) {}

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const
    {
        throw std::runtime_error(fmt::format("{}: key '{}': {}", source_, key, problem));
    }

    const toml::table* section(const std::string& name)
    {
        const toml::node* node = root_.get(name);
        if (!node) return nullptr;
        if (!node->is_table()) fail(name, "must be a table");
        seen_.insert(name);
        return node->as_table();
    }

    double number(const toml::table* table, const std::string& section, const std::string& key, double fallback,
                  double min, bool min_exclusive)
    {
        std::string full = section + "." + key;
        seen_.insert(full);
        const toml::node* node = table ? table->get(key) : nullptr;
        if (!node) return fallback;
        double value;
        if (auto i = node->value_exact<int64_t>()) value = static_cast<double>(*i);
        else if (auto d = node->value_exact<double>()) value = *d;
        else fail(full, fmt::format("expected a number, got {}", describe(*node)));
        if (!std::isfinite(value) || value < min || (min_exclusive && value == min))
            fail(full, fmt::format("value {} is out of range (must be {} {})", value, min_exclusive ? ">" : ">=", min));
        return value;
    }

    uint32_t count(const toml::table* table, const std::string& section, const std::string& key, uint32_t fallback,
                   uint32_t min, uint32_t max)
    {
        std::string full = section + "." + key;
        seen_.insert(full);
        const toml::node* node = table ? table->get(key) : nullptr;
        if (!node) return fallback;
        auto value = node->value_exact<int64_t>();
        if (!value) fail(full, fmt::format("expected an integer, got {}", describe(*node)));
        if (*value < min || *value > max) fail(full, fmt::format("value {} is out of range [{}, {}]", *value, min, max));
        return static_cast<uint32_t>(*value);
    }

    bool boolean(const toml::table* table, const std::string& section, const std::string& key, bool fallback)
    {
        std::string full = section + "." + key;
        seen_.insert(full);
        const toml::node* node = table ? table->get(key) : nullptr;
        if (!node) return fallback;
        auto value = node->value_exact<bool>();
        if (!value) fail(full, fmt::format("expected true or false, got {}", describe(*node)));
        return *value;
    }

    std::string text(const toml::table* table, const std::string& section, const std::string& key, std::string fallback,
                     const std::set<std::string>& allowed)
    {
        std::string full = section + "." + key;
        seen_.insert(full);
        const toml::node* node = table ? table->get(key) : nullptr;
        if (!node) return fallback;
        auto value = node->value_exact<std::string>();
        if (!value) fail(full, fmt::format("expected a string, got {}", describe(*node)));
        if (!allowed.empty() && !allowed.count(*value)) {
            std::string list;
            for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
            fail(full, fmt::format("unknown value '{}' (known: {})", *value, list));
        }
        return *value;
    }

    // Every key present must have been read: unknown keys are errors, not ignored.
    void reject_unknown() const
    {
        for (const auto& [name, node] : root_) {
            std::string section(name.str());
            if (!seen_.count(section)) fail(section, "unknown section");
            if (const toml::table* table = node.as_table())
                for (const auto& [key, value] : *table)
                    if (!seen_.count(section + "." + std::string(key.str()))) fail(section + "." + std::string(key.str()), "unknown key");
        }
    }

private:
    static std::string describe(const toml::node& node)
    {
        std::ostringstream out;
        node.visit([&out](const auto& value) { out << value; });
        return fmt::format("'{}'", out.str());
    }

    const toml::table& root_;
    std::string source_;
    std::set<std::string> seen_;
};

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency, bool fatpipe)
{
    sg4::Link* link = zone->create_link(name, bandwidth);
    link->set_latency(latency);
    if (fatpipe) link->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    link->seal();
    return link;
}

}  // namespace

PlatformSpec parse_platform(const std::string& toml_text, const std::string& source)
{
    toml::table root;
    try {
        root = toml::parse(toml_text, source);
    } catch (const toml::parse_error& error) {
        const auto& where = error.source().begin;
        throw std::runtime_error(fmt::format("{}:{}:{}: {}", source, where.line, where.column, error.description()));
    }
    StrictReader in(root, source);
    PlatformSpec spec;
    spec.source = source;
    const toml::table* platform = in.section("platform");
    spec.name = in.text(platform, "platform", "name", spec.name, {});
    spec.nodes = in.count(platform, "platform", "nodes", spec.nodes, 1, 65536);
    spec.cores_per_node = in.count(platform, "platform", "cores_per_node", spec.cores_per_node, 1, 4096);
    spec.core_speed = in.number(platform, "platform", "core_speed", spec.core_speed, 0, true);
    spec.topology = in.text(platform, "platform", "topology", spec.topology, {"switch"});
    const toml::table* pcie = in.section("pcie");
    spec.pcie_limiter_bandwidth = in.number(pcie, "pcie", "limiter_bandwidth", spec.pcie_limiter_bandwidth, 0, true);
    spec.pcie_limiter_latency = in.number(pcie, "pcie", "limiter_latency", spec.pcie_limiter_latency, 0, false);
    spec.pcie_shared_bandwidth = in.number(pcie, "pcie", "shared_bandwidth", spec.pcie_shared_bandwidth, 0, true);
    spec.pcie_shared_latency = in.number(pcie, "pcie", "shared_latency", spec.pcie_shared_latency, 0, false);
    const toml::table* bxi = in.section("bxi");
    spec.bxi_link_bandwidth = in.number(bxi, "bxi", "link_bandwidth", spec.bxi_link_bandwidth, 0, true);
    spec.bxi_link_latency = in.number(bxi, "bxi", "link_latency", spec.bxi_link_latency, 0, false);
    const toml::table* nic = in.section("nic");
    spec.command_queue_depth = in.count(nic, "nic", "command_queue_depth", spec.command_queue_depth, 1, 1 << 20);
    spec.e2e = in.boolean(nic, "nic", "e2e", spec.e2e);
    spec.model_pci = in.boolean(nic, "nic", "model_pci", spec.model_pci);
    spec.model_pci_commands = in.boolean(nic, "nic", "model_pci_commands", spec.model_pci_commands) && spec.model_pci;
    in.reject_unknown();
    return spec;
}

PlatformSpec default_platform()
{
    return parse_platform(kDefaultPlatformToml, "<built-in default platform>");
}

std::vector<NodeHosts> build_platform(const PlatformSpec& spec)
{
    sg4::NetZone* zone = sg4::create_full_zone(spec.name);
    std::vector<NodeHosts> nodes(spec.nodes);
    std::vector<sg4::Link*> bxi_links(spec.nodes);
    for (uint32_t nid = 0; nid < spec.nodes; ++nid) {
        NodeHosts& node = nodes[nid];
        node.name = fmt::format("node{}", nid);
        for (uint32_t core = 0; core < spec.cores_per_node; ++core)
            node.cores.push_back(zone->create_host(fmt::format("{}_CPU{}", node.name, core), spec.core_speed));
        node.nic = zone->create_host(node.name + "_NIC", 1e9);
        sg4::Link* limiter = make_link(zone, node.name + "_PCI_FAT", spec.pcie_limiter_bandwidth,
                                       spec.pcie_limiter_latency, true);
        sg4::Link* shared = make_link(zone, node.name + "_PCI", spec.pcie_shared_bandwidth, spec.pcie_shared_latency,
                                      false);
        for (sg4::Host* core : node.cores)
            zone->add_route(core->get_netpoint(), node.nic->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(limiter), sg4::LinkInRoute(shared)}, true);
        bxi_links[nid] = make_link(zone, node.name + "_BXI", spec.bxi_link_bandwidth, spec.bxi_link_latency, false);
    }
    // One switch: a NIC-to-NIC route crosses the sender's and the receiver's BXI links.
    for (uint32_t a = 0; a < spec.nodes; ++a)
        for (uint32_t b = a + 1; b < spec.nodes; ++b)
            zone->add_route(nodes[a].nic->get_netpoint(), nodes[b].nic->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(bxi_links[a]), sg4::LinkInRoute(bxi_links[b])}, true);
    zone->seal();
    return nodes;
}

}  // namespace s4bxi::sim
