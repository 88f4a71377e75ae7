// The simulated cluster: its description (from TOML) and the SimGrid objects built from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

namespace s4bxi::sim {

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
