// The run summary the launcher prints: JSON written by the server at the end of a run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace s4bxi::sim {

struct Context;
struct PlatformSpec;

// What the network did, for the summary.
struct NetworkTotals {
    uint64_t bytes_moved = 0;
    uint64_t retransmissions = 0;  // E2E
    uint64_t undeliverable = 0;    // messages given up after the last retry
    nlohmann::json network_models;  // NetworkModels::summary(); null if the run never started
};

nlohmann::json make_summary(const Context& ctx, double makespan, const NetworkTotals& network, const PlatformSpec& platform);
void write_summary(const nlohmann::json& summary, const std::string& path);

}  // namespace s4bxi::sim
