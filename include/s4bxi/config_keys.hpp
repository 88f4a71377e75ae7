// Every parameter of the platform description, by its dotted TOML key ("nic.quick_acks"),
// with its type, its range and the S4BXI_* environment variable that overrides it.
//
// One table, shared by the server (which reads the platform file, applies the overrides
// and builds the platform) and by s4bxi-launch (which checks `--set key=value` and the
// S4BXI_* values before it starts anything). Header-only, standard library only.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "s4bxi/network_schedule.hpp"

namespace s4bxi::config {

enum class Type {
    Bool,       // true / false
    Count,      // unsigned integer that fits 32 bits
    Size,       // unsigned integer (bytes)
    Real,       // finite number
    Text,       // string (`choices` lists the allowed values, '|'-separated, when not empty)
    CountList,  // list of unsigned integers: a TOML array, or "4,4,4" from --set
};

struct Key {
    std::string_view key;
    Type type;
    double min = 0;
    double max = 0;             // 0 = no upper bound
    bool min_exclusive = false;
    std::string_view env = {};  // S4BXI_* variable, empty if none
    bool env_inverted = false;  // the variable means the opposite (S4BXI_E2E_OFF)
    std::string_view choices = {};
    std::string_view help = {};
    std::string_view range_reason = {};  // why the range is what it is, for error messages
};

inline constexpr double kCount32 = 4294967295.0;
inline constexpr double kInt = 2147483647.0;  // the counts of ptl_ni_limits_t are ints
inline constexpr double kNoMax = 0;

inline constexpr std::string_view kPtIndexReason = "Open MPI uses portal table indices up to 16";
inline constexpr std::string_view kIovecsReason = "the NIC reads at most 1048576 entries of an I/O vector";
inline constexpr std::string_view kOpenMpiSizeReason = "Open MPI loops forever on a limit of 0 B";

// The order is the order of --print-config and of docs/model.md.
inline constexpr Key kKeys[] = {
    {"platform.name", Type::Text, 0, 0, false, {}, false, {}, "name of the SimGrid zone"},
    {"platform.nodes", Type::Count, 1, 65536, false, {}, false, {},
     "number of nodes (a fat tree, dragonfly or torus gives it when the file does not)"},
    {"platform.cores_per_node", Type::Count, 1, 4096, false, {}, false, {}, "CPU hosts per node"},
    {"platform.core_speed", Type::Real, 0, kNoMax, true, {}, false, {}, "flop/s of a core"},
    {"platform.topology", Type::Text, 0, 0, false, {}, false, "switch|fat_tree|dragonfly|torus",
     "how the NICs are connected"},
    {"platform.nids", Type::CountList, 0, kCount32, false, {}, false, {},
     "NID of each node, in node order (default: 0, 1, ...)"},
    {"platform.plugin", Type::Text, 0, 0, false, {}, false, {},
     "shared library that builds the SimGrid platform itself (docs/platforms.md)"},
    {"platform.compute_lone_transfers", Type::Bool, 0, 0, false, "S4BXI_COMPUTE_LONE_TRANSFERS", false, {},
     "a transfer of up to 128 B alone on its links is timed by formula, not simulated"},
    {"platform.copy_once_from", Type::Size, 0, kNoMax, false, "S4BXI_COPY_ONCE_FROM", false, {},
     "bytes: larger payloads are copied once, by the delivery thread of the rank they land in (0: never)"},

    {"pcie.limiter_bandwidth", Type::Real, 0, kNoMax, true, "S4BXI_PCIE_LIMITER_BANDWIDTH", false, {},
     "B/s, per-transfer cap (FATPIPE)"},
    {"pcie.limiter_latency", Type::Real, 0, kNoMax, false, "S4BXI_PCIE_LIMITER_LATENCY", false, {}, "s"},
    {"pcie.shared_bandwidth", Type::Real, 0, kNoMax, true, "S4BXI_PCIE_SHARED_BANDWIDTH", false, {},
     "B/s, the node's bus (SHARED)"},
    {"pcie.shared_latency", Type::Real, 0, kNoMax, false, "S4BXI_PCIE_SHARED_LATENCY", false, {}, "s"},

    {"bxi.link_bandwidth", Type::Real, 0, kNoMax, true, "S4BXI_BXI_LINK_BANDWIDTH", false, {},
     "B/s, NIC <-> its switch"},
    {"bxi.link_latency", Type::Real, 0, kNoMax, false, "S4BXI_BXI_LINK_LATENCY", false, {}, "s"},

    {"topology.parameters", Type::Text, 0, 0, false, {}, false, {},
     "fat_tree: SimGrid PGFT string \"levels;down;up;count\"; dragonfly: \"g,blue;c,black;r,green;n\""},
    {"topology.dimensions", Type::CountList, 1, 65536, false, {}, false, {}, "torus: size of each dimension"},
    {"topology.link_bandwidth", Type::Real, 0, kNoMax, true, "S4BXI_TOPOLOGY_LINK_BANDWIDTH", false, {},
     "B/s, switch <-> switch (default: bxi.link_bandwidth)"},
    {"topology.link_latency", Type::Real, 0, kNoMax, false, "S4BXI_TOPOLOGY_LINK_LATENCY", false, {},
     "s, switch <-> switch (default: bxi.link_latency)"},

    {"network.model", Type::Text, 0, 0, false, "S4BXI_NETWORK_MODEL", false, {},
     "detailed (the BXI NIC, PCIe and E2E model), flow (each operation one network transfer), or a schedule "
     "of both at simulated dates: flow@0,detailed@1.5ms,flow@20ms"},
    {"network.switch", Type::Text, 0, 0, false, "S4BXI_NETWORK_SWITCH", false, "dates|pcontrol",
     "dates (only network.model's schedule switches models) or pcontrol (MPI_Pcontrol(0) on every rank "
     "selects the flow model, MPI_Pcontrol(n > 0) the detailed one)"},
    {"flow.command_time", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_COMMAND_TIME", false, {},
     "s, flow model: what posting an operation costs the calling rank"},
    {"flow.latency", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_LATENCY", false, {},
     "s, flow model: added to every message's network transfer"},
    {"flow.small_size", Type::Size, 0, kNoMax, false, "S4BXI_FLOW_SMALL_SIZE", false, {},
     "B, flow model: messages up to this size wait flow.small_latency instead of flow.latency"},
    {"flow.small_latency", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_SMALL_LATENCY", false, {},
     "s, flow model: added to every message up to flow.small_size (fitted)"},
    {"flow.gap", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_GAP", false, {},
     "s, flow model: a NIC takes in one message at a time, this long apart (fitted)"},
    {"flow.answer_gap", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_ANSWER_GAP", false, {},
     "s, flow model: a NIC sends its ACKs and responses one at a time, this long apart (fitted)"},
    {"flow.send_gap", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_SEND_GAP", false, {},
     "s, flow model: a NIC sends one payload over flow.small_size at a time, this long plus "
     "flow.byte_gap per byte apart (fitted)"},
    {"flow.byte_gap", Type::Real, 0, kNoMax, false, "S4BXI_FLOW_BYTE_GAP", false, {},
     "s per byte, flow model: what each byte of a payload adds to the gaps of the NICs that send and take "
     "it in (fitted)"},
    {"flow.bandwidth_factor", Type::Real, 0, 1, true, "S4BXI_FLOW_BANDWIDTH_FACTOR", false, {},
     "flow model: the share of the links' bandwidth a message's payload gets"},

    {"nic.command_queue_depth", Type::Count, 1, 1 << 20, false, "S4BXI_NIC_COMMAND_QUEUE_DEPTH", false, {},
     "commands a NI may have queued before the CPU blocks"},
    {"nic.e2e", Type::Bool, 0, 0, false, "S4BXI_E2E_OFF", true, {}, "BXI end-to-end acknowledgements"},
    {"nic.model_pci", Type::Bool, 0, 0, false, "S4BXI_MODEL_PCI", false, {},
     "PIO, DMA and payload writes cost PCIe time (false forces nic.model_pci_commands off)"},
    {"nic.model_pci_commands", Type::Bool, 0, 0, false, "S4BXI_MODEL_PCI_COMMANDS", false, {},
     "64-byte commands and 96-byte event writes cost PCIe time"},
    {"nic.max_retries", Type::Count, 0, 1000000, false, "S4BXI_MAX_RETRIES", false, {},
     "E2E retransmissions before giving up"},
    {"nic.retry_timeout", Type::Real, 0, kNoMax, true, "S4BXI_RETRY_TIMEOUT", false, {}, "s, E2E timeout"},
    {"nic.e2e_entries", Type::Count, 1, 1 << 24, false, "S4BXI_NIC_E2E_ENTRIES", false, {},
     "E2E entries per node"},
    {"nic.max_inflight_to_target", Type::Count, 0, kCount32, false, "S4BXI_MAX_INFLIGHT_TO_TARGET", false, {},
     "flow control: messages in flight to one node (0: no limit)"},
    {"nic.max_inflight_to_process", Type::Count, 0, kCount32, false, "S4BXI_MAX_INFLIGHT_TO_PROCESS", false, {},
     "flow control: messages in flight to one process (0: no limit)"},
    {"nic.quick_acks", Type::Bool, 0, 0, false, "S4BXI_QUICK_ACKS", false, {},
     "the target ACKs before writing the payload"},

    {"nic.timings.pci_latency_heuristic", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_PCI_LATENCY_HEURISTIC",
     false, {}, "s, first/last-packet waits"},
    {"nic.timings.pci_heuristic_bandwidth", Type::Real, 0, kNoMax, true,
     "S4BXI_NIC_TIMINGS_PCI_HEURISTIC_BANDWIDTH", false, {}, "B/s, first/last-packet waits"},
    {"nic.timings.packet_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_TIMINGS_PACKET_SIZE", false, {},
     "B, size switch of the wait formula"},
    {"nic.timings.send_preparation", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_SEND_PREPARATION", false, {},
     "s, before every network send"},
    {"nic.timings.tx_after_put_no_dma", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_TX_AFTER_PUT_NO_DMA", false,
     {}, "s, TX after an inline/PIO put"},
    {"nic.timings.tx_after_ptl_ack", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_TX_AFTER_PTL_ACK", false, {},
     "s, TX after a PTL ACK"},
    {"nic.timings.tx_after_get", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_TX_AFTER_GET", false, {},
     "s, TX after a Get request"},
    {"nic.timings.tx_after_response_no_dma", Type::Real, 0, kNoMax, false,
     "S4BXI_NIC_TIMINGS_TX_AFTER_RESPONSE_NO_DMA", false, {}, "s, TX after a response without data"},
    {"nic.timings.cpu_after_pio", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_CPU_AFTER_PIO", false, {},
     "s, CPU after a PIO push (PtlPut)"},
    {"nic.timings.ptl_init", Type::Real, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_PTL_INIT", false, {},
     "s, each PtlInit on the rank's core"},
    {"nic.timings.command_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_COMMAND_SIZE", false, {},
     "B, CPU -> NIC command"},
    {"nic.timings.dma_request_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_DMA_REQUEST_SIZE", false, {},
     "B, NIC -> CPU before a DMA read"},
    {"nic.timings.event_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_EVENT_SIZE", false, {},
     "B, event write"},
    {"nic.timings.ack_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_ACK_SIZE", false, {},
     "B, PTL ACK and BXI ACK on the network"},
    {"nic.timings.get_request_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_GET_REQUEST_SIZE", false, {},
     "B, Get request on the network"},
    {"nic.timings.inline_matching", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_INLINE_MATCHING", false, {},
     "B, inline limit (matching NI)"},
    {"nic.timings.inline_non_matching", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_INLINE_NON_MATCHING", false,
     {}, "B, inline limit (non-matching NI)"},
    {"nic.timings.pio_matching", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_PIO_MATCHING", false, {},
     "B, PIO limit (matching NI)"},
    {"nic.timings.pio_non_matching", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_PIO_NON_MATCHING", false, {},
     "B, PIO limit (non-matching NI)"},
    {"nic.timings.e2e_context_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_TIMINGS_E2E_CONTEXT_SIZE", false, {},
     "B, early SEND up to this size"},

    {"nic.limits.max_entries", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_ENTRIES", false, {},
     "default: list entries (MEs and LEs) of a process"},
    {"nic.limits.max_unexpected_headers", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_UNEXPECTED_HEADERS",
     false, {}, "default: unexpected headers (reported only)"},
    {"nic.limits.max_mds", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_MDS", false, {},
     "default: memory descriptors"},
    {"nic.limits.max_cts", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_CTS", false, {},
     "default: counting events"},
    {"nic.limits.max_eqs", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_EQS", false, {}, "default: event queues"},
    {"nic.limits.max_pt_index", Type::Count, 16, 255, false, "S4BXI_NIC_LIMITS_MAX_PT_INDEX", false, {},
     "default: highest portal table index", kPtIndexReason},
    {"nic.limits.max_iovecs", Type::Count, 0, 1 << 20, false, "S4BXI_NIC_LIMITS_MAX_IOVECS", false, {},
     "default: entries of an I/O vector", kIovecsReason},
    {"nic.limits.max_list_size", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_LIST_SIZE", false, {},
     "default: entries on the lists of one portal table entry"},
    {"nic.limits.max_triggered_ops", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMITS_MAX_TRIGGERED_OPS", false, {},
     "default: triggered operations pending"},
    {"nic.limits.max_msg_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_MSG_SIZE", false, {},
     "default: B, largest message", kOpenMpiSizeReason},
    {"nic.limits.max_atomic_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_ATOMIC_SIZE", false, {},
     "default: B, largest atomic operation", kOpenMpiSizeReason},
    {"nic.limits.max_fetch_atomic_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_FETCH_ATOMIC_SIZE",
     false, {}, "default: B, largest fetching atomic or swap", kOpenMpiSizeReason},
    {"nic.limits.max_waw_ordered_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_WAW_ORDERED_SIZE",
     false, {}, "default: B, write-after-write ordering guaranteed up to this size", kOpenMpiSizeReason},
    {"nic.limits.max_war_ordered_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_WAR_ORDERED_SIZE",
     false, {}, "default: B, write-after-read ordering guaranteed up to this size", kOpenMpiSizeReason},
    {"nic.limits.max_volatile_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_LIMITS_MAX_VOLATILE_SIZE", false, {},
     "default: B, largest payload of a PTL_MD_VOLATILE MD (reported only)"},

    {"nic.limit_caps.max_entries", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_ENTRIES", false, {},
     "cap: list entries (MEs and LEs) of a process"},
    {"nic.limit_caps.max_unexpected_headers", Type::Count, 0, kInt, false,
     "S4BXI_NIC_LIMIT_CAPS_MAX_UNEXPECTED_HEADERS", false, {}, "cap: unexpected headers (reported only)"},
    {"nic.limit_caps.max_mds", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_MDS", false, {},
     "cap: memory descriptors"},
    {"nic.limit_caps.max_cts", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_CTS", false, {},
     "cap: counting events"},
    {"nic.limit_caps.max_eqs", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_EQS", false, {},
     "cap: event queues"},
    {"nic.limit_caps.max_pt_index", Type::Count, 16, 255, false, "S4BXI_NIC_LIMIT_CAPS_MAX_PT_INDEX", false, {},
     "cap: highest portal table index", kPtIndexReason},
    {"nic.limit_caps.max_iovecs", Type::Count, 0, 1 << 20, false, "S4BXI_NIC_LIMIT_CAPS_MAX_IOVECS", false, {},
     "cap: entries of an I/O vector", kIovecsReason},
    {"nic.limit_caps.max_list_size", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_LIST_SIZE", false, {},
     "cap: entries on the lists of one portal table entry"},
    {"nic.limit_caps.max_triggered_ops", Type::Count, 0, kInt, false, "S4BXI_NIC_LIMIT_CAPS_MAX_TRIGGERED_OPS",
     false, {}, "cap: triggered operations pending"},
    {"nic.limit_caps.max_msg_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_MSG_SIZE", false, {},
     "cap: B, largest message", kOpenMpiSizeReason},
    {"nic.limit_caps.max_atomic_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_ATOMIC_SIZE", false, {},
     "cap: B, largest atomic operation", kOpenMpiSizeReason},
    {"nic.limit_caps.max_fetch_atomic_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_FETCH_ATOMIC_SIZE",
     false, {}, "cap: B, largest fetching atomic or swap", kOpenMpiSizeReason},
    {"nic.limit_caps.max_waw_ordered_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_WAW_ORDERED_SIZE",
     false, {}, "cap: B, write-after-write ordering guaranteed up to this size", kOpenMpiSizeReason},
    {"nic.limit_caps.max_war_ordered_size", Type::Size, 1, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_WAR_ORDERED_SIZE",
     false, {}, "cap: B, write-after-read ordering guaranteed up to this size", kOpenMpiSizeReason},
    {"nic.limit_caps.max_volatile_size", Type::Size, 0, kNoMax, false, "S4BXI_NIC_LIMIT_CAPS_MAX_VOLATILE_SIZE",
     false, {}, "cap: B, largest payload of a PTL_MD_VOLATILE MD (reported only)"},

    {"trace.folder", Type::Text, 0, 0, false, "S4BXI_LOG_FOLDER", false, {},
     "directory of the CSV traces (empty or /dev/null: no trace)"},
    {"trace.computation", Type::Bool, 0, 0, false, "S4BXI_LOG_COMPUTATION", false, {}, "also trace COMPUTE rows"},
};

// What is wrong with `model` as network.model (docs/network-models.md "The flow model", "Switching
// network models"), or empty. The launcher's --network-model and the server's platform
// (file, S4BXI_NETWORK_MODEL, --set) both ask here.
inline std::string network_model_problem(std::string_view model)
{
    return netmodel::parse_schedule(model).problem;
}

inline const Key* find_key(std::string_view key)
{
    for (const Key& k : kKeys)
        if (k.key == key) return &k;
    return nullptr;
}

inline const Key* find_env(std::string_view env)
{
    for (const Key& k : kKeys)
        if (!k.env.empty() && k.env == env) return &k;
    return nullptr;
}

// A value given as text (--set, environment), checked against its key.
struct Parsed {
    bool ok = false;
    std::string error;  // what was expected, when !ok
    bool boolean = false;
    double real = 0;
    uint64_t integer = 0;
    std::string text;
    std::vector<uint64_t> list;
};

inline std::string describe_range(const Key& k)
{
    auto number = [](double v) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.15g", v);
        return std::string(buffer);
    };
    std::string range = (k.min_exclusive ? "> " : ">= ") + number(k.min);
    if (k.max != kNoMax) range += " and <= " + number(k.max);
    if (!k.range_reason.empty()) range += ": " + std::string(k.range_reason);
    return range;
}

// Whole-string unsigned integer, or nothing.
inline bool parse_unsigned(std::string_view text, uint64_t& out)
{
    if (text.empty() || text.front() == '-') return false;
    if (text.front() == '+') text.remove_prefix(1);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size();
}

// Checks a number against the key's range; empty when fine.
inline std::string check_range(const Key& k, double value)
{
    bool low = k.min_exclusive ? value <= k.min : value < k.min;
    bool high = k.max != kNoMax && value > k.max;
    if (!std::isfinite(value) || low || high) return "a value " + describe_range(k);
    return {};
}

// Booleans follow the reference simulator: true is "TRUE", "true" or "1"; but anything
// that is not one of true/false/TRUE/FALSE/1/0 is an error rather than false.
inline Parsed parse_text(const Key& k, std::string_view text)
{
    Parsed p;
    switch (k.type) {
    case Type::Bool:
        if (text == "true" || text == "TRUE" || text == "1") p.boolean = true;
        else if (text == "false" || text == "FALSE" || text == "0") p.boolean = false;
        else {
            p.error = "true, false, TRUE, FALSE, 1 or 0";
            return p;
        }
        break;
    case Type::Count:
    case Type::Size: {
        uint64_t value = 0;
        if (!parse_unsigned(text, value)) {
            p.error = "an integer " + describe_range(k);
            return p;
        }
        double limit = k.type == Type::Count ? kCount32 : 1.8e19;
        if (static_cast<double>(value) > limit || !check_range(k, static_cast<double>(value)).empty()) {
            p.error = "an integer " + describe_range(k);
            return p;
        }
        p.integer = value;
        break;
    }
    case Type::Real: {
        std::string_view t = text;
        if (!t.empty() && t.front() == '+') t.remove_prefix(1);
        double value = 0;
        auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
        if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !check_range(k, value).empty()) {
            p.error = "a number " + describe_range(k);
            return p;
        }
        p.real = value;
        break;
    }
    case Type::Text:
        if (!k.choices.empty()) {
            bool found = false;
            std::string_view rest = k.choices;
            while (!rest.empty()) {
                size_t bar = rest.find('|');
                if (rest.substr(0, bar) == text) found = true;
                if (bar == std::string_view::npos) break;
                rest.remove_prefix(bar + 1);
            }
            if (!found) {
                std::string list(k.choices);
                for (char& c : list)
                    if (c == '|') c = ',';
                p.error = "one of " + list;
                return p;
            }
        }
        p.text = std::string(text);
        break;
    case Type::CountList: {
        std::string_view rest = text;
        while (true) {
            size_t comma = rest.find(',');
            std::string_view item = rest.substr(0, comma);
            uint64_t value = 0;
            if (!parse_unsigned(item, value) || static_cast<double>(value) > kCount32 ||
                !check_range(k, static_cast<double>(value)).empty()) {
                p.error = "a comma-separated list of integers " + describe_range(k);
                return p;
            }
            p.list.push_back(value);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        break;
    }
    }
    p.ok = true;
    return p;
}

}  // namespace s4bxi::config
