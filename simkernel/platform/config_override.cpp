#include "platform/config_override.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace s4bxi::sim {

Overrides& command_line_overrides()
{
    static Overrides instance;
    return instance;
}

FieldRef field_of(PlatformSpec& s, std::string_view key)
{
    NicTimings& t = s.timings;
    // clang-format off
    if (key == "platform.name") return &s.name;
    if (key == "platform.nodes") return &s.nodes;
    if (key == "platform.cores_per_node") return &s.cores_per_node;
    if (key == "platform.core_speed") return &s.core_speed;
    if (key == "platform.topology") return &s.topology;
    if (key == "platform.nids") return &s.nids;
    if (key == "platform.compute_lone_transfers") return &s.compute_lone_transfers;
    if (key == "platform.copy_once_from") return &s.copy_once_from;
    if (key == "platform.plugin") return &s.plugin;
    if (key == "pcie.limiter_bandwidth") return &s.pcie_limiter_bandwidth;
    if (key == "pcie.limiter_latency") return &s.pcie_limiter_latency;
    if (key == "pcie.shared_bandwidth") return &s.pcie_shared_bandwidth;
    if (key == "pcie.shared_latency") return &s.pcie_shared_latency;
    if (key == "bxi.link_bandwidth") return &s.bxi_link_bandwidth;
    if (key == "bxi.link_latency") return &s.bxi_link_latency;
    if (key == "topology.parameters") return &s.topology_parameters;
    if (key == "topology.dimensions") return &s.torus_dimensions;
    if (key == "topology.link_bandwidth") return &s.topology_link_bandwidth;
    if (key == "topology.link_latency") return &s.topology_link_latency;
    if (key == "network.model") return &s.network_model;
    if (key == "network.switch") return &s.network_switch;
    if (key == "flow.command_time") return &s.flow_command_time;
    if (key == "flow.latency") return &s.flow_latency;
    if (key == "flow.small_size") return &s.flow_small_size;
    if (key == "flow.small_latency") return &s.flow_small_latency;
    if (key == "flow.gap") return &s.flow_gap;
    if (key == "flow.answer_gap") return &s.flow_answer_gap;
    if (key == "flow.send_gap") return &s.flow_send_gap;
    if (key == "flow.byte_gap") return &s.flow_byte_gap;
    if (key == "flow.bandwidth_factor") return &s.flow_bandwidth_factor;
    if (key == "nic.command_queue_depth") return &s.command_queue_depth;
    if (key == "nic.e2e") return &s.e2e;
    if (key == "nic.model_pci") return &s.model_pci;
    if (key == "nic.model_pci_commands") return &s.model_pci_commands;
    if (key == "nic.max_retries") return &s.max_retries;
    if (key == "nic.retry_timeout") return &s.retry_timeout;
    if (key == "nic.e2e_entries") return &s.e2e_entries;
    if (key == "nic.max_inflight_to_target") return &s.max_inflight_to_target;
    if (key == "nic.max_inflight_to_process") return &s.max_inflight_to_process;
    if (key == "nic.quick_acks") return &s.quick_acks;
    if (key == "nic.timings.pci_latency_heuristic") return &t.pci_latency_heuristic;
    if (key == "nic.timings.pci_heuristic_bandwidth") return &t.pci_heuristic_bandwidth;
    if (key == "nic.timings.packet_size") return &t.packet_size;
    if (key == "nic.timings.send_preparation") return &t.send_preparation;
    if (key == "nic.timings.tx_after_put_no_dma") return &t.tx_after_put_no_dma;
    if (key == "nic.timings.tx_after_ptl_ack") return &t.tx_after_ptl_ack;
    if (key == "nic.timings.tx_after_get") return &t.tx_after_get;
    if (key == "nic.timings.tx_after_response_no_dma") return &t.tx_after_response_no_dma;
    if (key == "nic.timings.cpu_after_pio") return &t.cpu_after_pio;
    if (key == "nic.timings.ptl_init") return &t.ptl_init;
    if (key == "nic.timings.command_size") return &t.command_size;
    if (key == "nic.timings.dma_request_size") return &t.dma_request_size;
    if (key == "nic.timings.event_size") return &t.event_size;
    if (key == "nic.timings.ack_size") return &t.ack_size;
    if (key == "nic.timings.get_request_size") return &t.get_request_size;
    if (key == "nic.timings.inline_matching") return &t.inline_matching;
    if (key == "nic.timings.inline_non_matching") return &t.inline_non_matching;
    if (key == "nic.timings.pio_matching") return &t.pio_matching;
    if (key == "nic.timings.pio_non_matching") return &t.pio_non_matching;
    if (key == "nic.timings.e2e_context_size") return &t.e2e_context_size;
    if (key == "trace.folder") return &s.trace_folder;
    if (key == "trace.computation") return &s.trace_computation;
    // clang-format on
    // [nic.limits] and [nic.limit_caps]: one key per field of NiLimits
    using Table = std::pair<std::string_view, NiLimits*>;
    for (auto [prefix, limits] : {Table{"nic.limits.", &s.ni_limits}, Table{"nic.limit_caps.", &s.ni_limit_caps}}) {
        if (!key.starts_with(prefix)) continue;
        FieldRef field;
        for_each_ni_limit([&](std::string_view name, auto& value) {
            if (key.substr(prefix.size()) == name) field = &value;
        }, *limits);
        return field;
    }
    return std::monostate{};
}

void store(PlatformSpec& spec, const config::Key& key, const config::Parsed& value)
{
    FieldRef field = field_of(spec, key.key);
    using config::Type;
    bool stored = false;
    switch (key.type) {
    case Type::Bool:
        if (auto p = std::get_if<bool*>(&field)) **p = value.boolean, stored = true;
        break;
    case Type::Count:
        if (auto p = std::get_if<uint32_t*>(&field)) **p = static_cast<uint32_t>(value.integer), stored = true;
        break;
    case Type::Size:
        if (auto p = std::get_if<uint64_t*>(&field)) **p = value.integer, stored = true;
        break;
    case Type::Real:
        if (auto p = std::get_if<double*>(&field)) **p = value.real, stored = true;
        break;
    case Type::Text:
        if (auto p = std::get_if<std::string*>(&field)) **p = value.text, stored = true;
        break;
    case Type::CountList:
        if (auto p = std::get_if<std::vector<uint32_t>*>(&field)) {
            (*p)->assign(value.list.begin(), value.list.end());
            stored = true;
        }
        break;
    }
    if (!stored) throw std::logic_error(fmt::format("key {} has no field of its type", key.key));
}

namespace {

void set_from_text(PlatformSpec& spec, const config::Key& key, std::string_view text, bool invert,
                   const std::string& where, const std::string& origin)
{
    config::Parsed parsed = config::parse_text(key, text);
    if (!parsed.ok)
        throw std::runtime_error(fmt::format("{}: invalid value '{}' for {}: expected {}", where, text, key.key, parsed.error));
    if (invert) parsed.boolean = !parsed.boolean;
    store(spec, key, parsed);
    spec.origins[std::string(key.key)] = origin;
}

}  // namespace

void apply_overrides(PlatformSpec& spec, const Overrides& overrides)
{
    for (const auto& [name, value] : overrides.env) {
        const config::Key* key = config::find_env(name);
        if (!key) throw std::runtime_error(fmt::format("unknown environment variable {}", name));
        set_from_text(spec, *key, value, key->env_inverted, "environment " + name, "environment " + name);
    }
    for (const std::string& set : overrides.sets) {
        size_t eq = set.find('=');
        if (eq == std::string::npos || eq == 0)
            throw std::runtime_error(fmt::format("--set '{}': expected KEY=VALUE, e.g. --set nic.quick_acks=true", set));
        std::string name = set.substr(0, eq);
        const config::Key* key = config::find_key(name);
        if (!key)
            throw std::runtime_error(
                fmt::format("--set '{}': unknown key '{}' (s4bxi-launch --print-config lists them)", set, name));
        set_from_text(spec, *key, std::string_view(set).substr(eq + 1), false, "--set " + set, "--set");
    }
    if (!overrides.trace_folder.empty()) {
        spec.trace_folder = overrides.trace_folder;
        spec.origins["trace.folder"] = "--trace";
    }
    finalize_platform(spec);
}

PlatformSpec load_platform_file(const std::string& path)
{
    if (path.empty()) return default_platform();
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("cannot read platform file '{}': {}", path, std::strerror(errno)));
    std::stringstream text;
    text << in.rdbuf();
    PlatformSpec spec = parse_platform(text.str(), path);
    // A plugin named in the file is found next to the file.
    if (!spec.plugin.empty() && spec.plugin.front() != '/') {
        size_t slash = path.rfind('/');
        if (slash != std::string::npos) spec.plugin = path.substr(0, slash + 1) + spec.plugin;
    }
    return spec;
}

namespace {

std::string toml_string(const std::string& text)
{
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<int>(c));
        else out += c;
    }
    return out + "\"";
}

std::string toml_real(double value)
{
    std::string text = fmt::format("{}", value);
    // TOML needs a '.' or an exponent for a float; "16" would read back as an integer,
    // which the platform reader accepts for numbers anyway.
    return text;
}

std::string format_value(PlatformSpec& spec, const config::Key& key)
{
    FieldRef field = field_of(spec, key.key);
    if (auto p = std::get_if<bool*>(&field)) return **p ? "true" : "false";
    if (auto p = std::get_if<uint32_t*>(&field)) return std::to_string(**p);
    if (auto p = std::get_if<uint64_t*>(&field)) return std::to_string(**p);
    if (auto p = std::get_if<double*>(&field)) return toml_real(**p);
    if (auto p = std::get_if<std::string*>(&field)) return toml_string(**p);
    if (auto p = std::get_if<std::vector<uint32_t>*>(&field)) return fmt::format("[{}]", fmt::join(**p, ", "));
    return "?";
}

}  // namespace

std::string format_config(const PlatformSpec& const_spec)
{
    PlatformSpec spec = const_spec;  // field_of needs a mutable object
    std::string out = fmt::format("# s4bxi effective configuration; platform: {}\n"
                                  "# precedence: --set > environment > platform file > default\n",
                                  spec.source);
    std::vector<std::pair<std::string, std::string>> lines;  // text, comment
    bool clustered = spec.topology == "fat_tree" || spec.topology == "dragonfly" || spec.topology == "torus";
    for (const config::Key& key : config::kKeys) {
        std::string name(key.key);
        auto it = spec.origins.find(name);
        std::string origin = it == spec.origins.end() ? "default" : it->second;
        std::string text = fmt::format("{} = {}", name, format_value(spec, key));
        // Keys that do not apply, or whose default is derived from another key, are
        // printed as comments so that the output reads back as a platform file.
        if (name == "platform.nids" && spec.nids.empty()) {
            text = fmt::format("# {} = [0 .. {}]", name, spec.nodes - 1);
            origin += ": the node index";
        } else if (name == "platform.plugin" && spec.plugin.empty()) {
            text = "# " + name + " = \"\"";
            origin += ": none";
        } else if (name == "topology.parameters" && spec.topology != "fat_tree" && spec.topology != "dragonfly") {
            text = "# " + name;
            origin = fmt::format("not used by topology '{}'", spec.topology);
        } else if (name == "topology.dimensions" && spec.topology != "torus") {
            text = "# " + name;
            origin = fmt::format("not used by topology '{}'", spec.topology);
        } else if (name == "topology.link_bandwidth" || name == "topology.link_latency") {
            bool bandwidth = name == "topology.link_bandwidth";
            if (!clustered) {
                text = "# " + name;
                origin = fmt::format("not used by topology '{}'", spec.topology);
            } else if ((bandwidth ? spec.topology_link_bandwidth : spec.topology_link_latency) < 0) {
                text = fmt::format("{} = {}", name,
                                   toml_real(bandwidth ? spec.switch_link_bandwidth() : spec.switch_link_latency()));
                origin += bandwidth ? ": same as bxi.link_bandwidth" : ": same as bxi.link_latency";
            }
        }
        lines.emplace_back(std::move(text), std::move(origin));
    }
    size_t width = 0;
    for (const auto& [text, comment] : lines) width = std::max(width, text.size());
    for (const auto& [text, comment] : lines) out += fmt::format("{:<{}}  # {}\n", text, width, comment);
    for (const LinkFailure& failure : spec.failures) {
        out += fmt::format("[[failure]]  # {}\nlink = {}\noff = {}\n{}", failure.origin, toml_string(failure.link),
                           toml_real(failure.off), failure.on < 0 ? "" : "on = " + toml_real(failure.on) + "\n");
    }
    return out;
}

}  // namespace s4bxi::sim
