// The simulated cluster: its description (from TOML) and the SimGrid objects built from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

namespace s4bxi::sim {

// NIC delays and sizes (BXI-MODEL.md Decisions §7; appendix §4). Seconds, bytes.
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

struct PlatformSpec {
    std::string source;  // file name, or "<built-in default>"
    std::string name = "default";
    uint32_t nodes = 16;
    uint32_t cores_per_node = 4;
    double core_speed = 1e10;
    std::string topology = "switch";
    double pcie_limiter_bandwidth = 11.1e9;
    double pcie_limiter_latency = 0.0;
    double pcie_shared_bandwidth = 15.75e9;
    double pcie_shared_latency = 250e-9;
    double bxi_link_bandwidth = 11.1e9;
    double bxi_link_latency = 500e-9;
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
};

// Parses a platform description; throws std::runtime_error naming file, key and value.
PlatformSpec parse_platform(const std::string& toml_text, const std::string& source);
PlatformSpec default_platform();

struct NodeHosts {
    std::vector<simgrid::s4u::Host*> cores;
    simgrid::s4u::Host* nic = nullptr;
    std::string name;
};

// Builds the SimGrid platform; returns the hosts of every node, by NID.
std::vector<NodeHosts> build_platform(const PlatformSpec& spec);

}  // namespace s4bxi::sim
