// The run summary: read the server's summary.json, print it for humans, write it for tools.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace s4bxi::launcher {

// Reads and parses a summary written by the server. On failure returns nullopt and sets
// `error` (empty when the file simply does not exist).
std::optional<nlohmann::json> read_summary(const std::string& path, std::string& error);

// The human summary printed on stderr. `server` may be null (the server wrote none).
// At most `max_rank_lines` rank lines are printed.
// `exit_status`: the launcher's own (the command's, or the first failing rank's); shown when
// not 0, since the simulation itself may have gone well.
std::string format_summary(const nlohmann::json* server, double wall_time, int exit_status = 0,
                           size_t max_rank_lines = 32);

// The JSON written by --summary FILE: the server's summary with "wall_time" and
// "exit_status" added (and "launcher_error" when the launcher itself stopped the run). With
// no server summary, a minimal document with status "error".
nlohmann::json launcher_summary(const nlohmann::json* server, double wall_time, int exit_status,
                                const std::string& launcher_error);

// "5 s", "1.5 ms", "12.345678 us"; exposed for tests.
std::string format_seconds(double seconds);
// "512 B", "1.5 KiB", "3.2 MiB"; exposed for tests.
std::string format_bytes(double bytes);

}  // namespace s4bxi::launcher
