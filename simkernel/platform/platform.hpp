// The simulated cluster: its description (from TOML) and the SimGrid objects built from it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "s4bxi/network_schedule.hpp"

namespace s4bxi::sim {

// NIC delays and sizes (docs/model.md "NIC timings"). Seconds, bytes.
struct NicTimings {
    double pci_latency_heuristic = 200e-9;      // first/last-packet waits
    double pci_heuristic_bandwidth = 15.75e9;
    uint64_t packet_size = 512;                 // size switch of the wait formula
    double send_preparation = 2e-9;             // before every network send
    double tx_after_put_no_dma = 200e-9;
    double tx_after_ptl_ack = 200e-9;
    double tx_after_get = 250e-9;
    double tx_after_response_no_dma = 300e-9;
    double cpu_after_pio = 200e-9;              // PtlPut only
    double ptl_init = 1e-9;                     // each PtlInit, on the rank's core
    uint64_t command_size = 64;
    uint64_t dma_request_size = 64;
    uint64_t event_size = 96;
    uint64_t ack_size = 32;
    uint64_t get_request_size = 64;
    uint64_t inline_matching = 8;
    uint64_t inline_non_matching = 16;
    uint64_t pio_matching = 408;
    uint64_t pio_non_matching = 416;
    uint64_t e2e_context_size = 64;             // early SEND for payloads up to this size
};

// The limits PtlNIInit reports (docs/model.md "NI limits"): every field of ptl_ni_limits_t
// but `features`, counts then sizes in bytes. A PlatformSpec holds two: the defaults,
// reported when PtlNIInit is given no desired limits, and the caps, the most a desired
// limit gets (a desired 0 gets the cap). The defaults here are the reference's.
struct NiLimits {
    uint32_t max_entries = 4080;
    uint32_t max_unexpected_headers = 16319;
    uint32_t max_mds = 1024;
    uint32_t max_cts = 1024;
    uint32_t max_eqs = 960;
    uint32_t max_pt_index = 255;
    uint32_t max_iovecs = 1 << 20;  // the reference has no iovecs (0); osc/portals4 gives one per contiguous piece
    uint32_t max_list_size = 16582;
    uint32_t max_triggered_ops = 16378;
    uint64_t max_msg_size = 67108864;
    uint64_t max_atomic_size = 1024;
    uint64_t max_fetch_atomic_size = 64;
    // The reference reports 0, but Open MPI's osc/portals4 splits accumulates into pieces
    // of MIN(max_atomic_size, ordered size) and loops forever on 0. Messages of up to 64 B
    // between two processes are delivered in order by this model (one TX and one RX per
    // virtual network, one route), so 64 B is a guarantee it keeps.
    uint64_t max_waw_ordered_size = 64;
    uint64_t max_war_ordered_size = 64;
    uint64_t max_volatile_size = 64;
};

// Calls visit(name, l.field...) for every limit, with the same field of each of `l` (any
// structs with the fields of NiLimits: NiLimits, ptl_ni_limits_t).
template <class Visit, class... Limits>
void for_each_ni_limit(Visit&& visit, Limits&... l)
{
    visit("max_entries", l.max_entries...);
    visit("max_unexpected_headers", l.max_unexpected_headers...);
    visit("max_mds", l.max_mds...);
    visit("max_cts", l.max_cts...);
    visit("max_eqs", l.max_eqs...);
    visit("max_pt_index", l.max_pt_index...);
    visit("max_iovecs", l.max_iovecs...);
    visit("max_list_size", l.max_list_size...);
    visit("max_triggered_ops", l.max_triggered_ops...);
    visit("max_msg_size", l.max_msg_size...);
    visit("max_atomic_size", l.max_atomic_size...);
    visit("max_fetch_atomic_size", l.max_fetch_atomic_size...);
    visit("max_waw_ordered_size", l.max_waw_ordered_size...);
    visit("max_war_ordered_size", l.max_war_ordered_size...);
    visit("max_volatile_size", l.max_volatile_size...);
}

// A link turned off at `off` and back on at `on` (simulated seconds; on < 0: never).
struct LinkFailure {
    std::string link;    // nodeN_BXI, nodeN_PCI or nodeN_PCI_FAT
    double off = 0.0;
    double on = -1.0;
    std::string origin;  // where it was given, for messages
};

struct PlatformSpec {
    std::string source;  // file name, or "<built-in default>"
    std::string name = "default";
    uint32_t nodes = 16;
    uint32_t cores_per_node = 4;
    double core_speed = 1e10;
    std::string topology = "switch";  // switch, fat_tree, dragonfly, torus
    std::vector<uint32_t> nids;       // NID of each node; empty: the node index
    std::string plugin;               // shared library building the platform itself
    bool compute_lone_transfers = true;  // lone_transfers.hpp
    uint64_t copy_once_from = 256 * 1024;  // services/rank_delivery.hpp
    // [topology]: fat_tree / dragonfly parameter string, torus dimensions, and the
    // switch-to-switch links (negative: same as the BXI link)
    std::string topology_parameters;
    std::vector<uint32_t> torus_dimensions;
    double topology_link_bandwidth = -1.0;
    double topology_link_latency = -1.0;
    double pcie_limiter_bandwidth = 11.1e9;
    double pcie_limiter_latency = 0.0;
    double pcie_shared_bandwidth = 15.75e9;
    double pcie_shared_latency = 250e-9;
    double bxi_link_bandwidth = 11.1e9;
    double bxi_link_latency = 500e-9;
    // [network] and [flow]: docs/network-models.md "The flow model" (the built-in platform's values)
    std::string network_model = "detailed";  // a model, or a schedule of models at dates
    std::string network_switch = "dates";     // or pcontrol: the program's MPI_Pcontrol calls switch
    std::vector<netmodel::Phase> network_phases{{}};  // network_model parsed (finalize_platform)
    double flow_command_time = 256e-9;
    double flow_latency = 7.35848e-07;
    uint64_t flow_small_size = 8;  // the detailed model's inline payloads, read without DMA
    double flow_small_latency = 2.60412e-07;
    double flow_gap = 7.09877e-07;
    double flow_answer_gap = 1.20502e-06;
    double flow_send_gap = 7.41157e-07;
    double flow_byte_gap = 9.00901e-11;
    double flow_bandwidth_factor = 1.0;
    uint32_t command_queue_depth = 16;
    bool e2e = true;
    bool model_pci = true;
    bool model_pci_commands = true;
    // E2E reliability (appendix §6)
    uint32_t max_retries = 5;
    double retry_timeout = 10.0;  // seconds
    uint32_t e2e_entries = 8192;  // per node
    // Flow control (appendix §7.1): 0 = no limit
    uint32_t max_inflight_to_target = 0;
    uint32_t max_inflight_to_process = 0;
    bool quick_acks = false;  // appendix §7.2
    NicTimings timings;
    // [nic.limits] and [nic.limit_caps]: what PtlNIInit reports (appendix §4.3)
    NiLimits ni_limits;
    NiLimits ni_limit_caps{
        .max_entries = 16319, .max_mds = 8191, .max_cts = 2047, .max_eqs = 2046, .max_list_size = 65535};
    std::vector<LinkFailure> failures;
    // CSV traces (appendix §10): empty or "/dev/null" = off
    std::string trace_folder;
    bool trace_computation = true;

    // Where each key's value comes from ("default", "platform file F:line",
    // "environment S4BXI_X", "--set", ...), by dotted key; see config_override.hpp.
    std::map<std::string, std::string> origins;

    uint32_t nid_of(uint32_t node_index) const { return nids.empty() ? node_index : nids.at(node_index); }
    double switch_link_bandwidth() const { return topology_link_bandwidth > 0 ? topology_link_bandwidth : bxi_link_bandwidth; }
    double switch_link_latency() const { return topology_link_latency >= 0 ? topology_link_latency : bxi_link_latency; }
    // The flow model for the whole run: the detailed model's switches are then forced off.
    bool flow() const
    {
        return !switches_models() && network_phases.front().model == netmodel::Model::Flow;
    }
    // Models switch during the run: each transfer keeps the model it started in.
    bool switches_models() const { return network_phases.size() > 1 || network_switch == "pcontrol"; }
    bool tracing() const { return !trace_folder.empty() && trace_folder != "/dev/null"; }
};

// Parses a platform description; throws std::runtime_error naming file, key and value.
// The result is checked as a whole (finalize_platform) before it is returned.
PlatformSpec parse_platform(const std::string& toml_text, const std::string& source);
PlatformSpec default_platform();

// Checks the keys against each other and derives what follows from them (the node count
// of a fat tree, model_pci_commands off without model_pci). Idempotent; run again after
// overrides. Throws std::runtime_error naming the keys and where their values come from.
void finalize_platform(PlatformSpec& spec);

// Number of leaves of a fat_tree / dragonfly / torus topology (0 for switch or a plugin).
uint32_t topology_leaves(const PlatformSpec& spec);

struct NodeHosts {
    std::vector<simgrid::s4u::Host*> cores;
    simgrid::s4u::Host* nic = nullptr;
    std::string name;
    uint32_t nid = 0;
};

// Builds the SimGrid platform (the engine must exist and have no platform yet); returns
// the hosts of every node, in node order (nodes[i].nid == spec.nid_of(i)).
// Throws std::runtime_error when a plugin fails or builds something inconsistent.
std::vector<NodeHosts> build_platform(const PlatformSpec& spec);

// A platform plugin is a shared library that exports this symbol (extern "C", built with
// the same compiler and SimGrid as s4bxi-simkernel). It is called once, with the SimGrid
// engine created and no zone yet, and must build and seal the whole platform, then append
// one NodeHosts per node, in node order: node i has nid spec.nid_of(i), at least
// spec.cores_per_node cores and its NIC host; every core has a route to its NIC, and
// every NIC to every other NIC. It reports errors by throwing std::exception.
// See docs/platforms.md and tests/integration/platforms/plugin_two_nodes.cpp.
inline constexpr const char* kPlatformLoaderSymbol = "s4bxi_load_platform";
using PlatformLoader = void(const PlatformSpec& spec, std::vector<NodeHosts>& nodes);

// Loads the plugin library and finds its loader; throws std::runtime_error if it cannot.
PlatformLoader* load_platform_plugin(const std::string& path);

}  // namespace s4bxi::sim
