#include "summary.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include "s4bxi/summary_keys.hpp"

namespace s4bxi::launcher {

namespace summary = s4bxi::summary;
namespace key = s4bxi::summary::key;

using nlohmann::json;

namespace {

std::optional<double> number(const json& object, const char* key)
{
    if (!object.is_object()) return std::nullopt;
    auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

std::optional<std::string> text(const json& object, const char* key)
{
    if (!object.is_object()) return std::nullopt;
    auto it = object.find(key);
    if (it == object.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

std::string trim_decimals(std::string value)
{
    if (value.find('.') == std::string::npos) return value;
    while (!value.empty() && value.back() == '0') value.pop_back();
    if (!value.empty() && value.back() == '.') value.pop_back();
    return value;
}

std::string count(std::optional<double> value)
{
    if (!value) return "-";
    return fmt::format("{:.0f}", *value);
}

}  // namespace

std::string format_seconds(double seconds)
{
    if (!std::isfinite(seconds)) return "-";
    double magnitude = std::fabs(seconds);
    if (magnitude == 0) return "0 s";
    if (magnitude >= 1) return trim_decimals(fmt::format("{:.6f}", seconds)) + " s";
    if (magnitude >= 1e-3) return trim_decimals(fmt::format("{:.6f}", seconds * 1e3)) + " ms";
    if (magnitude >= 1e-6) return trim_decimals(fmt::format("{:.6f}", seconds * 1e6)) + " us";
    return trim_decimals(fmt::format("{:.6f}", seconds * 1e9)) + " ns";
}

std::string format_bytes(double bytes)
{
    if (!std::isfinite(bytes) || bytes < 0) return "-";
    if (bytes < 1024) return fmt::format("{:.0f} B", bytes);
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double value = bytes / 1024;
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < std::size(units)) {
        value /= 1024;
        ++unit;
    }
    return fmt::format("{:.1f} {}", value, units[unit]);
}

std::optional<json> read_summary(const std::string& path, std::string& error)
{
    error.clear();
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream buffer;
    buffer << in.rdbuf();
    json parsed = json::parse(buffer.str(), nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        error = "the simulation server's summary is not a valid JSON object";
        return std::nullopt;
    }
    return parsed;
}

namespace {

// The MPI functions that took the most time, all ranks together (the summary's "mpi",
// sorted by the server), as mpiP's table does.
std::string format_mpi_functions(const json& server, size_t shown = 5)
{
    auto functions = server.find(key::mpi);
    if (functions == server.end() || !functions->is_array() || functions->empty()) return {};
    auto world = number(server, key::world_size);
    std::string out = fmt::format("  {:<20}{:<26} {:>9} {:>16}  {}\n", "top MPI functions", "function", "calls",
                                  "time per rank", "bytes");
    for (size_t i = 0; i < functions->size() && i < shown; ++i) {
        const json& f = (*functions)[i];
        auto time = number(f, key::time);
        auto bytes = number(f, key::bytes);
        double per_rank = time && world && *world > 0 ? *time / *world : 0.0;
        out += fmt::format("  {:<20}{:<26} {:>9} {:>16}  {}\n", "", text(f, key::function).value_or("-"),
                           count(number(f, key::calls)), format_seconds(per_rank), bytes ? format_bytes(*bytes) : "-");
    }
    return out;
}

// What charged the simulated compute (measured CPU model), and what the host did meanwhile.
std::string format_host_and_cpu(const json& server)
{
    std::string out;
    auto row = [&](const char* label, const std::string& value) { out += fmt::format("  {:<20}{}\n", label, value); };
    auto ranks = server.find(key::ranks);
    double compute = 0, library = 0, portals = 0, switches = 0;
    if (ranks != server.end() && ranks->is_array())
        for (const json& rank : *ranks) {
            compute += number(rank, key::compute_time).value_or(0);
            library += number(rank, key::mpi_library_time).value_or(0);
            portals += number(rank, key::portals_time).value_or(0);
            switches += number(rank, key::involuntary_switches).value_or(0);
        }
    if (auto costs = server.find(key::mpi_costs); costs != server.end() && costs->is_object()) {
        bool calibrated = text(*costs, key::model).value_or("") == "calibrated";
        row("CPU charged", fmt::format("compute {} (measured), MPI library {} ({}), in Portals {} (the NIC model), "
                                       "all ranks",
                                       format_seconds(compute), format_seconds(library),
                                       calibrated ? "calibrated costs: " + text(*costs, key::costs).value_or("-")
                                                  : "measured, in compute",
                                       format_seconds(portals)));
    }
    if (auto load = server.find(key::host_load); load != server.end() && load->is_object()) {
        auto first = [&](const char* key) {
            auto it = load->find(key);
            return it != load->end() && it->is_array() && !it->empty() && it->front().is_number()
                       ? fmt::format("{:.2f}", it->front().get<double>())
                       : std::string("-");
        };
        row("host", fmt::format("load average {} at start, {} at end; the ranks' threads taken off their cores {} "
                                "times (docs/time.md)",
                                first(key::at_start), first(key::at_end), count(switches)));
    }
    return out;
}

}  // namespace

std::string format_summary(const json* server, double wall_time, int exit_status, size_t max_rank_lines)
{
    std::string out = "s4bxi-launch: run summary\n";
    auto row = [&](const char* label, const std::string& value) { out += fmt::format("  {:<20}{}\n", label, value); };
    if (!server) {
        row("status", "unknown: the simulation server wrote no summary (did it crash?)");
        row("wall time", fmt::format("{:.3f} s", wall_time));
        return out;
    }
    std::string status = text(*server, key::status).value_or("unknown");
    std::string message = text(*server, key::message).value_or("");
    // The server's message may carry a backtrace (already printed on its stderr): first line only.
    message = message.substr(0, message.find('\n'));
    row("status", message.empty() || status == "ok" ? status : status + ": " + message);
    if (exit_status != 0) row("exit status", fmt::format("{} (of the program or command)", exit_status));
    auto makespan = number(*server, key::makespan);
    row("simulated makespan", makespan ? format_seconds(*makespan) : "-");
    row("wall time", fmt::format("{:.3f} s", wall_time));
    row("ranks", count(number(*server, key::world_size)));
    if (auto platform = server->find(key::platform); platform != server->end() && platform->is_object()) {
        std::string source = text(*platform, key::source).value_or("-");
        std::string topology = text(*platform, key::topology).value_or("-");
        bool fitted = text(*platform, key::nodes_from).value_or("").rfind("sized by the job", 0) == 0;
        row("platform", fmt::format("{} ({}), {} nodes{} of {} cores, {}", text(*platform, key::name).value_or("-"),
                                    source.starts_with("<built-in") ? "built-in" : source,
                                    count(number(*platform, key::nodes)), fitted ? " (as the job needs)" : "",
                                    count(number(*platform, key::cores_per_node)),
                                    topology == "switch" ? "one switch" : topology));
        if (auto model = text(*platform, key::network_model); model && *model != "detailed")
            row("network model", *model == "flow" ? "flow (each Portals operation one network transfer)" : *model);
    }
    if (auto models = server->find(key::network_models); models != server->end() && models->is_object()) {
        const json& spans = models->value(key::spans, json::array());
        bool pcontrol = models->value(key::pcontrol_calls, 0) > 0;
        if (spans.size() > 1 || pcontrol) {
            std::string phases;
            for (const json& span : spans)
                phases += fmt::format("{}{} from {}", phases.empty() ? "" : ", ", span.value(key::model, "?"),
                                      format_seconds(span.value(key::from, 0.0)));
            row("network models", fmt::format("{} (detailed {}, flow {})", phases,
                                              format_seconds(models->value(key::time_detailed, 0.0)),
                                              format_seconds(models->value(key::time_flow, 0.0))));
        }
        for (const json& note : models->value(key::notes, json::array()))
            if (note.is_string()) row("", note.get<std::string>());
    }
    auto local_ops = number(*server, key::portals_local_ops);
    row("Portals operations", local_ops && *local_ops > 0
                                  ? fmt::format("{} ({} read from the mirror, no round trip)",
                                                count(number(*server, key::portals_ops)), count(local_ops))
                                  : count(number(*server, key::portals_ops)));
    auto bytes = number(*server, key::bytes_moved);
    row("bytes moved", bytes ? fmt::format("{:.0f} ({})", *bytes, format_bytes(*bytes)) : "-");
    auto retransmissions = number(*server, key::retransmissions);
    auto undeliverable = number(*server, key::undeliverable);
    if ((retransmissions && *retransmissions > 0) || (undeliverable && *undeliverable > 0))
        row("E2E", fmt::format("{} retransmissions, {} messages given up", count(retransmissions), count(undeliverable)));

    // Only when the server took one: a run where it took none is the same from run to run
    // under the zero CPU model, whatever the host.
    if (auto decisions = server->find(key::host_decisions); decisions != server->end() && decisions->is_object()) {
        auto memory = number(*decisions, key::memory_waits).value_or(0);
        auto blocked = number(*decisions, key::blocked_outside).value_or(0);
        auto by_reads = number(*decisions, key::memory_waits_by_reads).value_or(0);
        auto idles = number(*decisions, key::lockstep_idles).value_or(0);
        if (memory > 0 || blocked > 0 || idles > 0)
            row("host decisions", fmt::format("{} memory waits{}, {} blocked outside, {} lockstep idles (from the "
                                              "host's CPU times and thread states)",
                                              count(memory),
                                              by_reads > 0 ? fmt::format(" ({} by plain reads)", count(by_reads)) : "",
                                              count(blocked), count(idles)));
    }

    out += format_host_and_cpu(*server);

    auto server_peak = number(*server, key::server_peak_rss);
    auto rank_peak = number(*server, key::largest_rank_peak_rss);
    if (server_peak && *server_peak > 0)
        row("peak memory", fmt::format("server {}, largest rank {}", format_bytes(*server_peak),
                                       rank_peak && *rank_peak > 0 ? format_bytes(*rank_peak) : std::string("-")));

    out += format_mpi_functions(*server);

    auto ranks = server->find(key::ranks);
    if (ranks == server->end() || !ranks->is_array() || ranks->empty()) return out;
    out += fmt::format("  {:>6}  {:<12} {:>5}  {:<16} {:<16} {:<16} {:>11} {:>9}  {}\n", "rank", "node", "core",
                       "end time", "compute", "in Portals", "Portals ops", "messages", "bytes sent");
    size_t shown = 0;
    for (const json& rank : *ranks) {
        if (shown == max_rank_lines) {
            out += fmt::format("  ... {} more ranks (use --summary FILE for all of them)\n", ranks->size() - shown);
            break;
        }
        ++shown;
        auto end_time = number(rank, key::end_time);
        std::string end = end_time ? format_seconds(*end_time) : "-";
        auto finished = rank.is_object() ? rank.find(key::finished) : rank.end();
        bool unfinished =
            rank.is_object() && finished != rank.end() && finished->is_boolean() && !finished->get<bool>();
        auto sent = number(rank, key::bytes_sent);
        auto seconds = [&](const char* key) {
            auto value = number(rank, key);
            return value ? format_seconds(*value) : std::string("-");
        };
        std::string line = fmt::format("  {:>6}  {:<12} {:>5}  {:<16} {:<16} {:<16} {:>11} {:>9}  {:<10}",
                                       count(number(rank, key::rank)), text(rank, key::node).value_or("-"),
                                       count(number(rank, key::core)), end, seconds(key::compute_time),
                                       seconds(key::portals_time), count(number(rank, key::portals_ops)),
                                       count(number(rank, key::messages_sent)), sent ? format_bytes(*sent) : "-");
        if (unfinished) line += "  unfinished";
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

json launcher_summary(const json* server, double wall_time, int exit_status, const std::string& launcher_error)
{
    json out;
    if (server && server->is_object()) {
        out = *server;
    } else {
        out = json::object();
        out[key::version] = summary::kVersion;
        out[key::status] = "error";
        out[key::message] = "the simulation server wrote no summary";
    }
    out[key::wall_time] = wall_time;
    out[key::exit_status] = exit_status;
    if (!launcher_error.empty()) out[key::launcher_error] = launcher_error;
    return out;
}

}  // namespace s4bxi::launcher
