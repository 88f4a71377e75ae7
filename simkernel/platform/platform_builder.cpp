// The platform description: reading it from TOML, checking it, and building the SimGrid
// platform from it (one switch, a fat tree, a dragonfly, a torus, or a plugin).
#include <dlfcn.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <toml++/toml.h>

#include <simgrid/kernel/ProfileBuilder.hpp>

#include "platform/config_override.hpp"
#include "platform/platform.hpp"
#include "s4bxi/config_keys.hpp"

namespace s4bxi::sim {

extern const char kDefaultPlatformToml[];

namespace {

namespace sg4 = simgrid::s4u;

// Reads every key of a platform file against config::kKeys: unknown sections and keys,
// wrong types and impossible values are errors naming the file, the key and the value.
class StrictReader {
public:
    StrictReader(const toml::table& root, std::string source) : root_(root), source_(std::move(source))
    {
        for (const config::Key& key : config::kKeys) {
            std::string_view k = key.key;
            for (size_t dot = k.find('.'); dot != std::string_view::npos; dot = k.find('.', dot + 1))
                sections_.insert(std::string(k.substr(0, dot)));
        }
    }

    [[noreturn]] void fail(const toml::node* node, const std::string& key, const std::string& problem) const
    {
        if (node && node->source().begin.line > 0)
            throw std::runtime_error(fmt::format("{}:{}: key '{}': {}", source_, node->source().begin.line, key, problem));
        throw std::runtime_error(fmt::format("{}: key '{}': {}", source_, key, problem));
    }

    std::string origin(const toml::node& node) const
    {
        if (node.source().begin.line > 0) return fmt::format("platform file {}:{}", source_, node.source().begin.line);
        return fmt::format("platform file {}", source_);
    }

    void read(PlatformSpec& spec) { walk(root_, "", spec); }

private:
    void walk(const toml::table& table, const std::string& prefix, PlatformSpec& spec)
    {
        for (const auto& [name, node] : table) {
            std::string full = prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
            if (prefix.empty() && full == "failure") {
                read_failures(node, spec);
                continue;
            }
            if (sections_.count(full)) {
                const toml::table* sub = node.as_table();
                if (!sub) fail(&node, full, "must be a table");
                walk(*sub, full, spec);
                continue;
            }
            const config::Key* key = config::find_key(full);
            if (!key) fail(&node, full, prefix.empty() ? "unknown section" : "unknown key");
            store(spec, *key, value(node, *key, full));
            spec.origins[full] = origin(node);
        }
    }

    static std::string describe(const toml::node& node)
    {
        std::ostringstream out;
        node.visit([&out](const auto& value) { out << value; });
        return fmt::format("'{}'", out.str());
    }

    double number(const toml::node& node, const std::string& full)
    {
        if (auto i = node.value_exact<int64_t>()) return static_cast<double>(*i);
        if (auto d = node.value_exact<double>()) return *d;
        fail(&node, full, fmt::format("expected a number, got {}", describe(node)));
    }

    uint64_t integer(const toml::node& node, const config::Key& key, const std::string& full)
    {
        auto value = node.value_exact<int64_t>();
        if (!value) fail(&node, full, fmt::format("expected an integer, got {}", describe(node)));
        double limit = key.type == config::Type::Size ? 1.8e19 : config::kCount32;
        if (*value < 0 || static_cast<double>(*value) > limit || !config::check_range(key, static_cast<double>(*value)).empty())
            fail(&node, full, fmt::format("value {} is out of range (must be {})", *value, config::describe_range(key)));
        return static_cast<uint64_t>(*value);
    }

    config::Parsed value(const toml::node& node, const config::Key& key, const std::string& full)
    {
        config::Parsed p;
        p.ok = true;
        switch (key.type) {
        case config::Type::Bool: {
            auto v = node.value_exact<bool>();
            if (!v) fail(&node, full, fmt::format("expected true or false, got {}", describe(node)));
            p.boolean = *v;
            break;
        }
        case config::Type::Count:
        case config::Type::Size: p.integer = integer(node, key, full); break;
        case config::Type::Real:
            p.real = number(node, full);
            if (!config::check_range(key, p.real).empty())
                fail(&node, full, fmt::format("value {} is out of range (must be {})", p.real, config::describe_range(key)));
            break;
        case config::Type::Text: {
            auto v = node.value_exact<std::string>();
            if (!v) fail(&node, full, fmt::format("expected a string, got {}", describe(node)));
            config::Parsed checked = config::parse_text(key, *v);
            if (!checked.ok) fail(&node, full, fmt::format("unknown value '{}' (known: {})", *v, checked.error.substr(7)));
            p.text = *v;
            break;
        }
        case config::Type::CountList: {
            const toml::array* array = node.as_array();
            if (!array) fail(&node, full, fmt::format("expected a list of integers, got {}", describe(node)));
            for (const toml::node& item : *array) p.list.push_back(integer(item, key, full));
            break;
        }
        }
        return p;
    }

    void read_failures(const toml::node& node, PlatformSpec& spec)
    {
        const toml::array* array = node.as_array();
        if (!array || !array->is_array_of_tables())
            fail(&node, "failure", "must be an array of tables: [[failure]] link = \"node0_BXI\" off = 1e-3 on = 2e-3");
        size_t index = 0;
        for (const toml::node& entry : *array) {
            const toml::table& table = *entry.as_table();
            std::string where = fmt::format("failure[{}]", index++);
            LinkFailure failure;
            failure.origin = origin(entry);
            bool has_link = false, has_off = false;
            for (const auto& [name, item] : table) {
                std::string key = where + "." + std::string(name.str());
                if (name == "link") {
                    auto v = item.value_exact<std::string>();
                    if (!v || v->empty()) fail(&item, key, fmt::format("expected a link name, got {}", describe(item)));
                    failure.link = *v;
                    has_link = true;
                } else if (name == "off" || name == "on") {
                    double t = number(item, key);
                    if (!std::isfinite(t) || t < 0)
                        fail(&item, key, fmt::format("value {} is out of range (must be >= 0 s)", t));
                    (name == "off" ? failure.off : failure.on) = t;
                    has_off |= name == "off";
                } else {
                    fail(&item, key, "unknown key (known: link, off, on)");
                }
            }
            if (!has_link) fail(&entry, where + ".link", "missing: the name of the link that fails");
            if (!has_off) fail(&entry, where + ".off", "missing: when the link goes off (simulated seconds)");
            if (failure.on >= 0 && failure.on <= failure.off)
                fail(&entry, where + ".on", fmt::format("value {} must be after off = {}", failure.on, failure.off));
            spec.failures.push_back(failure);
        }
    }

    const toml::table& root_;
    std::string source_;
    std::set<std::string> sections_;
};

std::string origin_of(const PlatformSpec& spec, const std::string& key)
{
    auto it = spec.origins.find(key);
    return it == spec.origins.end() ? "default" : it->second;
}

bool given(const PlatformSpec& spec, const std::string& key)
{
    std::string origin = origin_of(spec, key);
    return origin != "default" && origin.rfind("derived", 0) != 0;
}

[[noreturn]] void invalid(const PlatformSpec& spec, const std::string& key, const std::string& problem)
{
    throw std::runtime_error(fmt::format("{}: {} ({} from {})", spec.source, problem, key, origin_of(spec, key)));
}

std::vector<unsigned> split_numbers(const std::string& text, char separator, bool& ok)
{
    std::vector<unsigned> out;
    ok = true;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
        uint64_t value = 0;
        if (!config::parse_unsigned(item, value) || value > 1000000) ok = false;
        out.push_back(static_cast<unsigned>(value));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return out;
}

std::vector<std::string> split(const std::string& text, char separator)
{
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
        size_t end = text.find(separator, start);
        out.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

// "levels;down,...;up,...;count,..." (SimGrid's PGFT notation).
sg4::FatTreeParams fat_tree_params(const PlatformSpec& spec)
{
    const std::string& text = spec.topology_parameters;
    auto bad = [&](const std::string& why) -> sg4::FatTreeParams {
        invalid(spec, "topology.parameters",
                fmt::format("fat tree parameters '{}': {}; expected \"LEVELS;DOWN,...;UP,...;COUNT,...\" "
                            "with one DOWN, UP and COUNT per level, e.g. \"2;4,4;1,2;1,2\"",
                            text, why));
    };
    std::vector<std::string> parts = split(text, ';');
    if (parts.size() != 4) return bad("4 parts separated by ';' are needed");
    bool ok = true;
    std::vector<unsigned> levels = split_numbers(parts[0], ',', ok);
    if (!ok || levels.size() != 1 || levels[0] == 0) return bad("the number of levels must be an integer >= 1");
    std::vector<unsigned> vectors[3];
    for (int i = 0; i < 3; ++i) {
        vectors[i] = split_numbers(parts[i + 1], ',', ok);
        if (!ok) return bad(fmt::format("'{}' is not a list of integers", parts[i + 1]));
        if (vectors[i].size() != levels[0])
            return bad(fmt::format("'{}' has {} values for {} levels", parts[i + 1], vectors[i].size(), levels[0]));
        for (unsigned v : vectors[i])
            if (v == 0) return bad("every value must be >= 1");
    }
    try {
        return sg4::FatTreeParams(levels[0], vectors[0], vectors[1], vectors[2]);
    } catch (const std::exception& error) {
        return bad(error.what());
    }
}

// "groups,blue;chassis,black;routers,green;nodes" (SimGrid's dragonfly notation).
sg4::DragonflyParams dragonfly_params(const PlatformSpec& spec)
{
    const std::string& text = spec.topology_parameters;
    auto bad = [&](const std::string& why) -> sg4::DragonflyParams {
        invalid(spec, "topology.parameters",
                fmt::format("dragonfly parameters '{}': {}; expected \"GROUPS,BLUE;CHASSIS,BLACK;ROUTERS,GREEN;NODES\" "
                            "(counts and links per level, nodes per router), e.g. \"3,1;2,1;3,1;2\"",
                            text, why));
    };
    std::vector<std::string> parts = split(text, ';');
    if (parts.size() != 4) return bad("4 parts separated by ';' are needed");
    bool ok = true;
    std::vector<unsigned> levels[3];
    for (int i = 0; i < 3; ++i) {
        levels[i] = split_numbers(parts[i], ',', ok);
        if (!ok || levels[i].size() != 2 || levels[i][0] == 0 || levels[i][1] == 0)
            return bad(fmt::format("'{}' must be two integers >= 1", parts[i]));
    }
    std::vector<unsigned> nodes = split_numbers(parts[3], ',', ok);
    if (!ok || nodes.size() != 1 || nodes[0] == 0) return bad("the number of nodes per router must be an integer >= 1");
    // SimGrid reaches group g through router g of the first chassis of every group.
    if (levels[0][0] > levels[2][0])
        return bad(fmt::format("{} groups need at least {} routers per chassis (SimGrid reaches group g through "
                               "router g of a chassis)",
                               levels[0][0], levels[0][0]));
    try {
        return sg4::DragonflyParams({levels[0][0], levels[0][1]}, {levels[1][0], levels[1][1]},
                                    {levels[2][0], levels[2][1]}, nodes[0]);
    } catch (const std::exception& error) {
        return bad(error.what());
    }
}

// nodeN_BXI, nodeN_PCI, nodeN_PCI_FAT with N a NID of the platform.
bool failure_link_known(const PlatformSpec& spec, const std::string& link)
{
    static const std::regex pattern("node([0-9]+)_(BXI|PCI|PCI_FAT)");
    std::smatch match;
    if (!std::regex_match(link, match, pattern)) return false;
    uint64_t nid = 0;
    if (!config::parse_unsigned(match[1].str(), nid) || match[1].str() != std::to_string(nid)) return false;
    if (spec.nids.empty()) return nid < spec.nodes;
    return std::find(spec.nids.begin(), spec.nids.end(), nid) != spec.nids.end();
}

}  // namespace

uint32_t topology_leaves(const PlatformSpec& spec)
{
    if (spec.topology == "fat_tree") {
        sg4::FatTreeParams p = fat_tree_params(spec);
        return std::accumulate(p.down.begin(), p.down.end(), 1u, std::multiplies<>());
    }
    if (spec.topology == "dragonfly") {
        sg4::DragonflyParams p = dragonfly_params(spec);
        return p.groups.first * p.chassis.first * p.routers.first * p.nodes;
    }
    if (spec.topology == "torus") {
        uint64_t leaves = 1;
        for (uint32_t d : spec.torus_dimensions) leaves *= d;
        return static_cast<uint32_t>(std::min<uint64_t>(leaves, 1ull << 31));
    }
    return 0;
}

void finalize_platform(PlatformSpec& spec)
{
    netmodel::Schedule schedule = netmodel::parse_schedule(spec.network_model);
    if (!schedule.problem.empty()) invalid(spec, "network.model", schedule.problem);
    spec.network_phases = std::move(schedule.phases);
    if (spec.network_switch == "pcontrol" && spec.network_phases.size() > 1)
        invalid(spec, "network.switch",
                "pcontrol switches models at the program's MPI_Pcontrol calls: give network.model one model to "
                "start with, not a schedule of dates");
    if (spec.flow()) {
        // The flow model has no PCIe, no E2E and no flow control: a message is one network
        // transfer. What the keys said is kept in their origin, for --print-config.
        auto off = [&](const char* key, auto& field) {
            if (field) spec.origins[key] = fmt::format("derived: off in the flow model (was {} from {})", field, origin_of(spec, key));
            field = {};
        };
        off("nic.e2e", spec.e2e);
        off("nic.model_pci", spec.model_pci);
        off("nic.model_pci_commands", spec.model_pci_commands);
        off("nic.quick_acks", spec.quick_acks);
        off("nic.max_inflight_to_target", spec.max_inflight_to_target);
        off("nic.max_inflight_to_process", spec.max_inflight_to_process);
    }

    // The reference forces the PCIe command model off with the PCIe model.
    if (!spec.model_pci && spec.model_pci_commands) {
        spec.model_pci_commands = false;
        spec.origins["nic.model_pci_commands"] = "derived: forced off by nic.model_pci = false";
    }

    const std::string& topology = spec.topology;
    bool clustered = topology == "fat_tree" || topology == "dragonfly" || topology == "torus";
    if (!spec.plugin.empty() && given(spec, "platform.topology"))
        invalid(spec, "platform.topology", "a platform plugin builds the topology itself: give one or the other");
    if ((topology == "fat_tree" || topology == "dragonfly") && spec.topology_parameters.empty())
        invalid(spec, "topology.parameters", fmt::format("topology '{}' needs topology.parameters", topology));
    if (topology != "fat_tree" && topology != "dragonfly" && given(spec, "topology.parameters"))
        invalid(spec, "topology.parameters", fmt::format("not used by topology '{}'", topology));
    if (topology == "torus" && spec.torus_dimensions.empty())
        invalid(spec, "topology.dimensions", "topology 'torus' needs topology.dimensions, e.g. [4, 4]");
    if (topology != "torus" && given(spec, "topology.dimensions"))
        invalid(spec, "topology.dimensions", fmt::format("not used by topology '{}'", topology));
    for (const char* key : {"topology.link_bandwidth", "topology.link_latency"})
        if (!clustered && given(spec, key))
            invalid(spec, key,
                    fmt::format("topology '{}' has no switch-to-switch links", spec.plugin.empty() ? topology : "plugin"));

    if (clustered) {
        uint32_t leaves = topology_leaves(spec);
        std::string from = topology == "torus" ? "topology.dimensions" : "topology.parameters";
        if (leaves > 65536) invalid(spec, from, fmt::format("{} nodes: at most 65536", leaves));
        if (!given(spec, "platform.nodes")) {
            spec.nodes = leaves;
            spec.origins["platform.nodes"] = "derived from " + from;
        } else if (spec.nodes != leaves) {
            invalid(spec, "platform.nodes",
                    fmt::format("platform.nodes = {} but the {} has {} nodes ({} from {})", spec.nodes, topology,
                                leaves, from, origin_of(spec, from)));
        }
    }

    // PtlNIInit without desired limits reports the defaults; with them, at most the caps.
    for_each_ni_limit(
        [&spec](std::string_view name, uint64_t value, uint64_t cap) {
            if (value <= cap) return;
            std::string key = fmt::format("nic.limits.{}", name), cap_key = fmt::format("nic.limit_caps.{}", name);
            invalid(spec, key,
                    fmt::format("{} = {} is larger than its cap, {} = {} ({} from {})", key, value, cap_key, cap,
                                cap_key, origin_of(spec, cap_key)));
        },
        spec.ni_limits, spec.ni_limit_caps);

    if (!spec.nids.empty()) {
        if (spec.nids.size() != spec.nodes)
            invalid(spec, "platform.nids",
                    fmt::format("{} NIDs for {} nodes: give one per node", spec.nids.size(), spec.nodes));
        std::set<uint32_t> unique(spec.nids.begin(), spec.nids.end());
        if (unique.size() != spec.nids.size()) invalid(spec, "platform.nids", "every NID must be different");
    }

    std::map<std::string, std::vector<const LinkFailure*>> by_link;
    for (const LinkFailure& failure : spec.failures) {
        if (spec.plugin.empty() && !failure_link_known(spec, failure.link))
            throw std::runtime_error(fmt::format(
                "{}: failure of unknown link '{}' ({}): links that can fail are nodeN_BXI, nodeN_PCI and "
                "nodeN_PCI_FAT, N a NID of the platform",
                spec.source, failure.link, failure.origin));
        by_link[failure.link].push_back(&failure);
    }
    for (auto& [link, list] : by_link) {
        std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->off < b->off; });
        for (size_t i = 1; i < list.size(); ++i)
            if (list[i - 1]->on < 0 || list[i - 1]->on > list[i]->off)
                throw std::runtime_error(fmt::format("{}: failures of link '{}' overlap ({} and {})", spec.source, link,
                                                     list[i - 1]->origin, list[i]->origin));
    }
}

PlatformSpec parse_platform(const std::string& toml_text, const std::string& source)
{
    toml::table root;
    try {
        root = toml::parse(toml_text, source);
    } catch (const toml::parse_error& error) {
        const auto& where = error.source().begin;
        throw std::runtime_error(fmt::format("{}:{}:{}: {}", source, where.line, where.column, error.description()));
    }
    PlatformSpec spec;
    spec.source = source;
    for (const config::Key& key : config::kKeys) spec.origins[std::string(key.key)] = "default";
    StrictReader(root, source).read(spec);
    finalize_platform(spec);
    return spec;
}

PlatformSpec default_platform()
{
    PlatformSpec spec = parse_platform(kDefaultPlatformToml, "<built-in default platform>");
    for (auto& [key, origin] : spec.origins)
        if (origin.rfind("platform file", 0) == 0) origin = "default";
    return spec;
}

// ---------------------------------------------------------------------------------------
// Building

namespace {

// The state profile of every link that fails, by link name.
std::map<std::string, std::string> failure_profiles(const PlatformSpec& spec)
{
    std::map<std::string, std::vector<const LinkFailure*>> by_link;
    for (const LinkFailure& failure : spec.failures) by_link[failure.link].push_back(&failure);
    std::map<std::string, std::string> profiles;
    for (auto& [link, list] : by_link) {
        std::sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->off < b->off; });
        std::string text;
        for (const LinkFailure* f : list) {
            text += fmt::format("{:.17g} 0\n", f->off);
            if (f->on >= 0) text += fmt::format("{:.17g} 1\n", f->on);
        }
        profiles[link] = text;
    }
    return profiles;
}

class Builder {
public:
    explicit Builder(const PlatformSpec& spec) : spec_(spec), profiles_(failure_profiles(spec)) {}

    sg4::Link* link(sg4::NetZone* zone, const std::string& name, double bandwidth, double latency, bool fatpipe)
    {
        sg4::Link* link = zone->create_link(name, bandwidth);
        link->set_latency(latency);
        if (fatpipe) link->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
        if (auto it = profiles_.find(name); it != profiles_.end()) {
            link->set_state_profile(
                simgrid::kernel::profile::ProfileBuilder::from_string("failure_" + name, it->second, -1));
            applied_.insert(name);
        }
        link->seal();
        return link;
    }

    // Cores, NIC and the PCIe links of node `index`, in `zone`; routes core <-> NIC.
    NodeHosts node(sg4::NetZone* zone, uint32_t index)
    {
        NodeHosts node;
        node.nid = spec_.nid_of(index);
        node.name = fmt::format("node{}", node.nid);
        for (uint32_t core = 0; core < spec_.cores_per_node; ++core)
            node.cores.push_back(zone->create_host(fmt::format("{}_CPU{}", node.name, core), spec_.core_speed));
        node.nic = zone->create_host(node.name + "_NIC", 1e9);
        sg4::Link* limiter = link(zone, node.name + "_PCI_FAT", spec_.pcie_limiter_bandwidth, spec_.pcie_limiter_latency, true);
        sg4::Link* shared = link(zone, node.name + "_PCI", spec_.pcie_shared_bandwidth, spec_.pcie_shared_latency, false);
        for (sg4::Host* core : node.cores)
            zone->add_route(core->get_netpoint(), node.nic->get_netpoint(), nullptr, nullptr,
                            {sg4::LinkInRoute(limiter), sg4::LinkInRoute(shared)}, true);
        return node;
    }

    sg4::Link* bxi_link(sg4::NetZone* zone, const NodeHosts& node)
    {
        return link(zone, node.name + "_BXI", spec_.bxi_link_bandwidth, spec_.bxi_link_latency, false);
    }

    // Every NIC on one switch, in one full zone with explicit routes: a NIC-to-NIC route
    // crosses the sender's and the receiver's BXI links.
    std::vector<NodeHosts> one_switch()
    {
        sg4::NetZone* zone = sg4::create_full_zone(spec_.name);
        std::vector<NodeHosts> nodes;
        std::vector<sg4::Link*> bxi;
        for (uint32_t index = 0; index < spec_.nodes; ++index) {
            nodes.push_back(node(zone, index));
            bxi.push_back(bxi_link(zone, nodes.back()));
        }
        for (uint32_t a = 0; a < spec_.nodes; ++a)
            for (uint32_t b = a + 1; b < spec_.nodes; ++b)
                zone->add_route(nodes[a].nic->get_netpoint(), nodes[b].nic->get_netpoint(), nullptr, nullptr,
                                {sg4::LinkInRoute(bxi[a]), sg4::LinkInRoute(bxi[b])}, true);
        zone->seal();
        return nodes;
    }

    // A SimGrid cluster zone (fat tree, dragonfly, torus) whose leaves are the nodes. Each
    // node is a full zone: its cores, its NIC, the PCIe links, and its BXI link from the
    // NIC to a router, node<nid>_router, that is the node's gateway: the attachment point
    // to the topology. SimGrid adds its own links between that router and the topology's
    // switches; the ones that stand for the node's cable (fat tree and dragonfly leaf
    // links) get the BXI bandwidth and no latency, so that they change no timing: the
    // BXI link is ours, with its name, its latency and its failures.
    std::vector<NodeHosts> cluster()
    {
        std::vector<NodeHosts> nodes(spec_.nodes);
        auto set_netpoint = [this, &nodes](sg4::NetZone* parent, const std::vector<unsigned long>&, unsigned long position)
            -> std::pair<simgrid::kernel::routing::NetPoint*, simgrid::kernel::routing::NetPoint*> {
            auto index = static_cast<uint32_t>(position);
            std::string name = fmt::format("node{}", spec_.nid_of(index));
            sg4::NetZone* zone = sg4::create_full_zone(name);
            zone->set_parent(parent);
            NodeHosts& n = nodes.at(index);
            n = node(zone, index);
            simgrid::kernel::routing::NetPoint* router = zone->create_router(name + "_router");
            sg4::Link* bxi = bxi_link(zone, n);
            zone->add_route(n.nic->get_netpoint(), router, nullptr, nullptr, {sg4::LinkInRoute(bxi)}, true);
            for (sg4::Host* core : n.cores) {
                auto* limiter = sg4::Link::by_name(name + "_PCI_FAT");
                auto* shared = sg4::Link::by_name(name + "_PCI");
                zone->add_route(core->get_netpoint(), router, nullptr, nullptr,
                                {sg4::LinkInRoute(limiter), sg4::LinkInRoute(shared), sg4::LinkInRoute(bxi)}, true);
            }
            zone->seal();
            return {zone->get_netpoint(), router};
        };
        sg4::ClusterCallbacks callbacks(set_netpoint);
        double bandwidth = spec_.switch_link_bandwidth();
        double latency = spec_.switch_link_latency();
        auto shared = sg4::Link::SharingPolicy::SHARED;
        sg4::NetZone* zone = nullptr;
        if (spec_.topology == "fat_tree")
            zone = sg4::create_fatTree_zone(spec_.name, nullptr, fat_tree_params(spec_), callbacks, bandwidth, latency, shared);
        else if (spec_.topology == "dragonfly")
            zone = sg4::create_dragonfly_zone(spec_.name, nullptr, dragonfly_params(spec_), callbacks, bandwidth, latency, shared);
        else
            zone = sg4::create_torus_zone(spec_.name, nullptr,
                                          std::vector<unsigned long>(spec_.torus_dimensions.begin(), spec_.torus_dimensions.end()),
                                          callbacks, bandwidth, latency, shared);
        zone->seal();
        neutralize_leaf_links();
        return nodes;
    }

    // SimGrid 3.32 names the fat tree's links "link_from_<child>_<parent>_<serial>" and
    // creates the links of the leaves first (up[0] x count[0] per leaf); the dragonfly's
    // links of a router to its nodes are "local_link_from_router_...".
    // tests/unit/simkernel/test_topology.cpp checks the resulting route latencies.
    void neutralize_leaf_links()
    {
        std::vector<sg4::Link*> leaves;
        if (spec_.topology == "fat_tree") {
            static const std::regex name("link_from_[0-9]+_[0-9]+_([0-9]+)(_UP|_DOWN)?");
            std::vector<std::pair<unsigned long, sg4::Link*>> links;
            for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links()) {
                std::smatch match;
                if (std::regex_match(l->get_name(), match, name)) links.emplace_back(std::stoul(match[1].str()), l);
            }
            std::sort(links.begin(), links.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
            sg4::FatTreeParams p = fat_tree_params(spec_);
            size_t serials = static_cast<size_t>(spec_.nodes) * p.up[0] * p.number[0];
            std::set<unsigned long> leaf_serials;
            for (const auto& [serial, l] : links)
                if (leaf_serials.size() < serials || leaf_serials.count(serial)) {
                    leaf_serials.insert(serial);
                    leaves.push_back(l);
                }
        } else if (spec_.topology == "dragonfly") {
            for (sg4::Link* l : sg4::Engine::get_instance()->get_all_links())
                if (l->get_name().rfind("local_link_from_router_", 0) == 0) leaves.push_back(l);
        }
        for (sg4::Link* l : leaves) {
            l->set_bandwidth(spec_.bxi_link_bandwidth);
            l->set_latency(0);
        }
    }

    void check_failures_applied() const
    {
        for (const auto& [name, profile] : profiles_)
            if (!applied_.count(name))
                throw std::runtime_error(fmt::format("{}: link '{}' of a [[failure]] does not exist", spec_.source, name));
    }

private:
    const PlatformSpec& spec_;
    std::map<std::string, std::string> profiles_;
    std::set<std::string> applied_;
};

std::vector<NodeHosts> from_plugin(const PlatformSpec& spec)
{
    PlatformLoader* loader = load_platform_plugin(spec.plugin);
    std::vector<NodeHosts> nodes;
    try {
        loader(spec, nodes);
    } catch (const std::exception& error) {
        throw std::runtime_error(fmt::format("platform plugin '{}' failed: {}", spec.plugin, error.what()));
    }
    auto bad = [&](const std::string& why) {
        throw std::runtime_error(fmt::format("platform plugin '{}': {}", spec.plugin, why));
    };
    if (nodes.size() != spec.nodes)
        bad(fmt::format("it built {} nodes but platform.nodes is {}", nodes.size(), spec.nodes));
    for (uint32_t i = 0; i < nodes.size(); ++i) {
        const NodeHosts& n = nodes[i];
        if (n.nid != spec.nid_of(i)) bad(fmt::format("node {} has NID {}, expected {}", i, n.nid, spec.nid_of(i)));
        if (!n.nic) bad(fmt::format("node {} has no NIC host", i));
        if (n.cores.size() < spec.cores_per_node)
            bad(fmt::format("node {} has {} cores, platform.cores_per_node is {}", i, n.cores.size(), spec.cores_per_node));
        for (const sg4::Host* core : n.cores)
            if (!core) bad(fmt::format("node {} has a null core", i));
    }
    for (NodeHosts& n : nodes)
        if (n.name.empty()) n.name = fmt::format("node{}", n.nid);
    return nodes;
}

}  // namespace

PlatformLoader* load_platform_plugin(const std::string& path)
{
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) throw std::runtime_error(fmt::format("cannot load platform plugin '{}': {}", path, dlerror()));
    void* symbol = dlsym(library, kPlatformLoaderSymbol);
    if (!symbol)
        throw std::runtime_error(fmt::format("platform plugin '{}' does not export {} (extern \"C\")", path,
                                             kPlatformLoaderSymbol));
    return reinterpret_cast<PlatformLoader*>(symbol);
}

std::vector<NodeHosts> build_platform(const PlatformSpec& spec)
{
    if (!spec.plugin.empty()) return from_plugin(spec);
    Builder builder(spec);
    std::vector<NodeHosts> nodes = spec.topology == "switch" ? builder.one_switch() : builder.cluster();
    builder.check_failures_applied();
    return nodes;
}

}  // namespace s4bxi::sim
