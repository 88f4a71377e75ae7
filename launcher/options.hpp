// Command-line and environment parsing of s4bxi-launch.
//
// parse_options() is a pure function: it looks at nothing but its arguments (no file system,
// no process environment), so every rule can be unit-tested. Checks that need the file
// system (is the program there, is the platform file readable) live in paths.hpp.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace s4bxi::launcher {

enum class CpuModel { Measured, Zero };
enum class LogLevel { Error, Warning, Info, Debug };

std::string_view to_string(CpuModel model);
std::string_view to_string(LogLevel level);

struct Options {
    // Spawn mode (-n N): the launcher starts N ranks of `command` itself.
    // Command mode (no -n): `command` is run once (e.g. mpirun ...), ranks identify
    // themselves from their MPI environment.
    std::optional<int> np;
    int ppn = 1;
    std::optional<std::string> platform;
    CpuModel cpu_model = CpuModel::Measured;
    double cpu_factor = 1.0;
    double cpu_threshold = 1e-9;
    std::string memory_waits = "auto";  // auto, on, off (docs/time.md "Waiting on memory")
    std::string lockstep = "auto";      // auto, on, off (docs/time.md "Threads in lockstep")
    double timeout = 0.0;  // wall-clock seconds; 0 = no limit
    // Wall-clock seconds without progress before the server reports a deadlock: a rank
    // blocked outside the simulation holding the others (polls in vain: 10 s at most).
    double deadlock_timeout = 300.0;
    LogLevel log_level = LogLevel::Warning;
    std::optional<std::string> summary_file;
    bool quiet = false;
    bool keep_run_dir = false;
    std::string listen;  // --listen ADDR[:PORT] (docs/multi-host.md)
    std::optional<std::string> simkernel;  // explicit server path (default: next to the launcher)
    std::optional<std::string> preload;    // explicit library path (default: next to the launcher)
    std::vector<std::string> command;      // program (or command) and its arguments
    std::vector<int> service_ranks;        // ranks whose NIC traffic uses the service VNs

    // Model configuration, forwarded to the server (docs/model.md, "Configuration").
    std::vector<std::string> sets;                               // --set KEY=VALUE, in order
    std::vector<std::pair<std::string, std::string>> knob_env;   // S4BXI_* knobs of the environment
    std::optional<std::string> trace_dir;                        // --trace DIR
    std::optional<std::string> timeline_file;                    // --timeline FILE.json
    std::optional<std::string> paje_file;                        // --paje FILE
    std::optional<std::string> timeline_filter;                  // --timeline-filter ranks=...;time=...
    bool print_config = false;                                   // --print-config: print, run nothing
    // The MPI library's code under the measured CPU model (docs/time.md "The MPI library's
    // code"): "calibrated" (this host's costs), "measured" (its CPU time), or the costs
    // themselves ("send=NS,receive=NS,..."), which replace those calibrated for the keys given.
    std::string mpi_costs = "calibrated";
    bool calibrate = false;  // --calibrate: measure this host, print, run nothing

    bool spawn_mode() const { return np.has_value(); }
    // World size announced to the server: N in spawn mode, 0 (learned from the ranks) otherwise.
    int world_size() const { return np.value_or(0); }
};

struct ParseOutcome {
    enum class Kind { Run, Help, Version, Error, PrintConfig, Calibrate };
    Kind kind = Kind::Error;
    Options options;
    // Help: the full help text. Version: the version line. Error: the problem, one line,
    // without the "s4bxi-launch: error: " prefix.
    std::string text;
};

using Environment = std::map<std::string, std::string>;

// Environment variables the launcher accepts as defaults for its options (options win).
struct EnvDefault {
    const char* name;
    const char* option;  // the option it stands for
};
const std::vector<EnvDefault>& env_defaults();

// Variables the launcher (or the preloaded library) sets itself. Tolerated in the
// launcher's environment (e.g. a nested run) but replaced or removed for the children.
const std::vector<std::string>& internal_env_names();

// True if `name` is an S4BXI_* variable we know: ours, the internal ones, or a model knob
// (include/s4bxi/config_keys.hpp).
bool known_env_name(std::string_view name);

// The server arguments that carry the model configuration and what the run writes: --set,
// --env, --trace, --timeline, --paje, --timeline-filter.
std::vector<std::string> config_arguments(const Options& options);

// args: argv without argv[0]. env: the launcher's environment (only S4BXI_* entries matter).
ParseOutcome parse_options(const std::vector<std::string>& args, const Environment& env);

// The help text (also returned by parse_options for --help).
std::string help_text();

// The version line: "s4bxi-launch <version>".
std::string version_line();

// Strict number parsing shared by options and environment variables (whole string must be
// a number; no trailing garbage, no NaN/inf). Exposed for tests.
std::optional<long long> parse_integer(std::string_view text);
std::optional<double> parse_real(std::string_view text);

}  // namespace s4bxi::launcher
