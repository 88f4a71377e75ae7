// The run summary the launcher prints: JSON written by the server at the end of a run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace s4bxi::sim {

struct Context;

nlohmann::json make_summary(const Context& ctx, double makespan, uint64_t bytes_moved);
void write_summary(const nlohmann::json& summary, const std::string& path);

}  // namespace s4bxi::sim
