#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "s4bxi/config_keys.hpp"
#include "s4bxi/mpi_costs.hpp"
#include "s4bxi/server_flags.hpp"
#include "s4bxi/timeline_filter.hpp"

#ifndef S4BXI_VERSION
#error "S4BXI_VERSION must be defined by the build"
#endif

namespace s4bxi::launcher {

std::string_view to_string(CpuModel model)
{
    return model == CpuModel::Zero ? server_flags::kCpuModelZero : server_flags::kCpuModelMeasured;
}

std::string_view to_string(LogLevel level)
{
    // The server's spellings, in LogLevel's order (Error, Warning, Info, Debug).
    static_assert(server_flags::kLogLevels.size() == static_cast<size_t>(LogLevel::Debug) + 1);
    return server_flags::kLogLevels[static_cast<size_t>(level)];
}

const std::vector<EnvDefault>& env_defaults()
{
    static const std::vector<EnvDefault> list = {
        {"S4BXI_PPN", "--ppn"},
        {"S4BXI_PLATFORM", "--platform"},
        {"S4BXI_CPU_MODEL", "--cpu-model"},
        {"S4BXI_CPU_FACTOR", "--cpu-factor"},
        {"S4BXI_CPU_THRESHOLD", "--cpu-threshold"},
        {"S4BXI_MPI_COSTS", "--mpi-costs"},
        {"S4BXI_MEMORY_WAITS", "--memory-waits"},
        {"S4BXI_LOCKSTEP", "--lockstep"},
        {"S4BXI_TIMEOUT", "--timeout"},
        {"S4BXI_DEADLOCK_TIMEOUT", "--deadlock-timeout"},
        {"S4BXI_SERVICE_RANKS", "--service-ranks"},
        {"S4BXI_LOG_LEVEL", "--log-level"},
    };
    return list;
}

const std::vector<std::string>& internal_env_names()
{
    static const std::vector<std::string> list = {"S4BXI_SOCKET", "S4BXI_RANK", "S4BXI_SIZE", "S4BXI_RANK_PID",
                                                  "S4BXI_MPI_COST_TABLE", "S4BXI_RUN_SECRET",
                                                  "S4BXI_SERVER_ADDRESS", "S4BXI_AGENT"};
    return list;
}

bool known_env_name(std::string_view name)
{
    for (const auto& entry : env_defaults())
        if (name == entry.name) return true;
    for (const auto& entry : internal_env_names())
        if (name == entry) return true;
    if (name == "S4BXI_CACHE_DIR") return true;  // where Open MPI's components are cached (docs/openmpi.md)
    // Read by the build, test and benchmark scripts (docs/usage.md "Environment variables"), not by us.
    if (name == "S4BXI_PORTALS4_SOURCE" || name == "S4BXI_SOS_SOURCE" || name == "S4BXI_OSU_SOURCE" ||
        name == "S4BXI_LULESH_SOURCE" || name == "S4BXI_QUICKSILVER_SOURCE" || name == "S4BXI_REFERENCE_SOURCE" ||
        name == "S4BXI_CHECK_FULL")
        return true;
    return config::find_env(name) != nullptr;
}

std::vector<std::string> config_arguments(const Options& options)
{
    using namespace server_flags;
    std::vector<std::string> args;
    for (const auto& [name, value] : options.knob_env) {
        args.push_back(flag(kEnv));
        args.push_back(name + "=" + value);
    }
    for (const std::string& set : options.sets) {
        args.push_back(flag(kSet));
        args.push_back(set);
    }
    for (auto [name, value] : {std::pair{kTrace, &options.trace_dir},
                               {kTimeline, &options.timeline_file},
                               {kPaje, &options.paje_file},
                               {kTimelineFilter, &options.timeline_filter}}) {
        if (!*value) continue;
        args.push_back(flag(name));
        args.push_back(**value);
    }
    return args;
}

std::optional<long long> parse_integer(std::string_view text)
{
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') text.remove_prefix(1);
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<double> parse_real(std::string_view text)
{
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') text.remove_prefix(1);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

std::string version_line()
{
    return fmt::format("s4bxi-launch {}", S4BXI_VERSION);
}

std::string help_text()
{
    return fmt::format(R"(Usage: s4bxi-launch -n N [options] PROGRAM [ARGS...]
       s4bxi-launch [options] -- COMMAND [ARGS...]

Run unmodified Portals 4 / MPI programs on a simulated BXI cluster. With -n,
the launcher starts N ranks of PROGRAM itself. Without -n, COMMAND (e.g.
mpirun -np 4 ./app) is run once and its ranks identify themselves from their
MPI environment.

Options:
  -n, -np, --np, -c N   start N ranks of PROGRAM (N >= 1)
  -N, --ppn, -ppn, --npernode P
                        ranks per simulated node (default 1)
      --platform FILE   platform description (TOML); default: the built-in
                        platform, one switch, as many nodes as the job needs
      --cpu-model MODEL measured: the real CPU time of the ranks becomes
                        simulated time; zero: computation takes no simulated
                        time (default measured)
      --cpu-factor F    scale measured CPU time by F > 0 (default 1)
      --cpu-threshold S ignore computations shorter than S seconds
                        (default 1e-9)
      --mpi-costs C     measured CPU model: what a call of the MPI library
                        costs. calibrated: this host's cost of the same call
                        on a warm core, measured once and cached; measured:
                        the CPU time the call took in the rank; or
                        send=NS,receive=NS,poll=NS,collective=NS,
                        reduce_per_byte=NS, in place of the calibrated
                        values for the keys given (default calibrated)
      --calibrate       measure this host (a core's flop/s on a reference
                        kernel, the MPI library's costs), print them and the
                        --cpu-factor that makes a core of the platform's
                        core_speed (--platform), cache them, and exit
      --memory-waits W  zero CPU model: a rank computing with no Portals call
                        for 5 ms of CPU waits on its memory, and simulated
                        time runs to the next write into it: auto (OpenSHMEM
                        programs), on, off (default auto)
      --lockstep W      zero CPU model: the threads a rank starts run one at a
                        time, in an order of the rank's own, so that a threaded
                        run is the same every time: auto (OpenSHMEM programs),
                        on, off (default auto)
      --service-ranks LIST
                        ranks whose messages use the NICs' service virtual
                        networks, e.g. 0 or 0,4-7 (default: none)
      --timeout S       wall-clock limit of the whole run in seconds;
                        0 = no limit (default 0)
      --deadlock-timeout S
                        wall-clock seconds without progress before a deadlock
                        is reported while a rank is blocked outside the
                        simulation; ranks that only poll in vain: min(S, 10)
                        (default 300)
      --log-level LEVEL error, warning, info or debug (default warning)
      --summary FILE    also write the run summary as JSON to FILE
  -q, --quiet           do not print the run summary
      --network-model M detailed: the BXI NIC, PCIe and E2E model; flow: each
                        Portals operation is one network transfer, several
                        times cheaper to simulate; or both at simulated
                        dates, e.g. flow@0,detailed@1.5ms,flow@20ms (same as
                        --set network.model=M; default detailed)
      --network-model-switch pcontrol
                        switch models at the program's MPI_Pcontrol calls,
                        once every rank has made it: level 0 selects the flow
                        model, a level above 0 the detailed one (same as
                        --set network.switch=pcontrol; default dates)
      --set KEY=VALUE   override a key of the platform, e.g.
                        --set nic.quick_acks=true --set bxi.link_latency=1e-6
                        (repeatable; wins over S4BXI_* and the file)
      --trace DIR       write CSV traces of the NICs into DIR (log_0.csv, ...)
      --timeline FILE.json
                        write the run's timeline as Chrome trace-event JSON
                        (Perfetto, chrome://tracing, speedscope): a track per
                        rank with its computation, MPI and Portals calls and
                        waits, messages as arrows, the NICs' bytes in flight
      --paje FILE       write the same timeline in Paje (pj_dump, ViTE)
      --timeline-filter 'ranks=LIST;time=START:END'
                        show only these ranks (e.g. 0-3,8) and this window of
                        simulated time (e.g. 1ms:2.5ms; units s, ms, us, ns);
                        either part may be left out
      --print-config    print every model parameter, its value and where it
                        comes from (with --platform, --set), and exit
      --keep-run-dir    keep the private run directory (for debugging)
      --listen ADDR[:PORT]
                        accept processes of this run from other machines on
                        this address only (a free port without :PORT); they
                        prove themselves with a secret of the run, and are
                        told that ranks on other machines are not supported
                        yet (docs/multi-host.md)
      --simkernel PATH  use this simulation server instead of the installed one
      --preload PATH    use this Portals library instead of the installed one
  -h, --help            print this help and exit
      --version         print the version and exit

Environment:
  S4BXI_PPN, S4BXI_PLATFORM, S4BXI_CPU_MODEL, S4BXI_CPU_FACTOR,
  S4BXI_CPU_THRESHOLD, S4BXI_MPI_COSTS, S4BXI_MEMORY_WAITS, S4BXI_LOCKSTEP,
  S4BXI_SERVICE_RANKS, S4BXI_TIMEOUT, S4BXI_DEADLOCK_TIMEOUT and S4BXI_LOG_LEVEL
  give defaults for the options of the same name; options win. The model's
  knobs have variables of their own (S4BXI_QUICK_ACKS, S4BXI_MODEL_PCI,
  S4BXI_MODEL_PCI_COMMANDS,
  S4BXI_E2E_OFF, S4BXI_MAX_RETRIES, S4BXI_RETRY_TIMEOUT,
  S4BXI_MAX_INFLIGHT_TO_TARGET, S4BXI_MAX_INFLIGHT_TO_PROCESS, S4BXI_LOG_FOLDER,
  S4BXI_LOG_COMPUTATION, and S4BXI_<KEY> for the other keys, e.g.
  S4BXI_BXI_LINK_LATENCY): they override the platform file, --set overrides
  them; --print-config lists them all. Any other S4BXI_* variable is an error.

Exit status:
  the command's status (spawn mode: the first non-zero rank status, 128+signal
  for a rank killed by a signal); the server's status if the command succeeded
  but the simulation failed; 2 for bad usage; 124 when --timeout expired; 125
  when the launcher itself could not run the simulation; 128+signal when
  interrupted.

Examples:
  s4bxi-launch -n 2 ./pingpong
  s4bxi-launch -np 64 ./app
  s4bxi-launch --summary run.json -- mpirun -np 4 ./app
  s4bxi-launch --timeline run.json --paje run.paje -- mpirun -np 4 ./app
)");
}

namespace {

struct Raw {
    std::string memory_waits;
    std::string lockstep;
    std::string np, ppn, platform, cpu_model, cpu_factor, cpu_threshold, timeout, deadlock_timeout, log_level, summary,
        service_ranks;
    std::string simkernel, preload, trace, timeline, paje, timeline_filter, mpi_costs;
    std::vector<std::string> sets;
    std::string network_model;
    std::string network_switch;
    std::string listen;
    bool quiet = false, keep = false, help = false, version = false, print_config = false, calibrate = false;
};

// Validates one value; `where` names its source for the message ("--ppn" or "S4BXI_PPN").
struct Checker {
    std::string error;

    void fail(const std::string& where, const std::string& value, const char* expected)
    {
        if (error.empty()) error = fmt::format("invalid value '{}' for {}: expected {}", value, where, expected);
    }

    void integer_at_least(const std::string& where, const std::string& value, long long min, int& out)
    {
        auto parsed = parse_integer(value);
        if (!parsed || *parsed < min || *parsed > INT_MAX) {
            fail(where, value, min == 1 ? "an integer >= 1" : "an integer");
            return;
        }
        out = static_cast<int>(*parsed);
    }

    void real(const std::string& where, const std::string& value, bool strictly_positive, double& out)
    {
        auto parsed = parse_real(value);
        if (!parsed || (strictly_positive ? *parsed <= 0 : *parsed < 0)) {
            fail(where, value, strictly_positive ? "a number > 0" : "a number >= 0");
            return;
        }
        out = *parsed;
    }

    void cpu_model(const std::string& where, const std::string& value, CpuModel& out)
    {
        if (value == "measured") out = CpuModel::Measured;
        else if (value == "zero") out = CpuModel::Zero;
        else fail(where, value, "'measured' or 'zero'");
    }

    void mpi_costs(const std::string& where, const std::string& value, std::string& out)
    {
        if (value == "calibrated" || value == "measured") {
            out = value;
            return;
        }
        std::string_view culprit;
        if (value.empty() || !mpicost::parse_costs(value, &culprit)) {
            fail(where, value,
                 "'calibrated', 'measured' or costs in ns such as send=60,receive=40,poll=20,collective=20,"
                 "reduce_per_byte=0.03");
            return;
        }
        out = value;
    }

    void auto_on_off(const std::string& where, const std::string& value, std::string& out)
    {
        if (value == "auto" || value == "on" || value == "off") out = value;
        else fail(where, value, "'auto', 'on' or 'off'");
    }

    void log_level(const std::string& where, const std::string& value, LogLevel& out)
    {
        if (value == "error") out = LogLevel::Error;
        else if (value == "warning") out = LogLevel::Warning;
        else if (value == "info") out = LogLevel::Info;
        else if (value == "debug") out = LogLevel::Debug;
        else fail(where, value, "one of error, warning, info, debug");
    }

    // "0,3,5-7": ranks and inclusive ranges, each rank once.
    void rank_list(const std::string& where, const std::string& value, std::vector<int>& out)
    {
        std::vector<int> ranks;
        std::string_view rest = value;
        for (bool more = !rest.empty(); more;) {  // an empty list: no rank
            size_t comma = rest.find(',');
            std::string_view item = rest.substr(0, comma);
            more = comma != std::string_view::npos;
            if (more) rest.remove_prefix(comma + 1);
            size_t dash = item.find('-');
            auto first = parse_integer(std::string(item.substr(0, dash)));
            auto last = dash == std::string_view::npos ? first : parse_integer(std::string(item.substr(dash + 1)));
            if (item.empty() || !first || !last || *first < 0 || *last < *first || *last > INT_MAX) {
                fail(where, value, "a list of ranks >= 0 and ranges, e.g. 0,4-7");
                return;
            }
            for (long long r = *first; r <= *last; ++r) ranks.push_back(static_cast<int>(r));
        }
        std::sort(ranks.begin(), ranks.end());
        if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
            fail(where, value, "each rank once");
            return;
        }
        out = std::move(ranks);
    }

    void path(const std::string& where, const std::string& value, std::optional<std::string>& out)
    {
        if (value.empty()) fail(where, value, "a file name");
        else out = value;
    }
};

ParseOutcome error(std::string text)
{
    ParseOutcome outcome;
    outcome.kind = ParseOutcome::Kind::Error;
    outcome.text = std::move(text);
    return outcome;
}

// mpirun's single-dash "-np N" (CLI11 would read "-n" with the value "p"): "--np N"; so are
// Hydra's "-ppn P" and mpirun's "-npernode P", which oshrun users pass too. Only
// among our own options, before "--" or the program: the program's arguments are its own.
std::vector<std::string> with_mpirun_spellings(std::vector<std::string> args)
{
    static const std::vector<std::string_view> with_value = {
        "-n", "--np", "-np", "-c", "--ppn", "-ppn", "-N", "--npernode", "-npernode", "--platform", "--cpu-model",
        "--cpu-factor", "--cpu-threshold", "--memory-waits", "--lockstep", "--timeout", "--deadlock-timeout",
        "--service-ranks", "--log-level", "--summary", "--simkernel", "--preload", "--trace", "--set", "--network-model",
        "--network-model-switch", "--listen", "--timeline",
        "--paje", "--timeline-filter", "--mpi-costs"};
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--" || arg.empty() || arg[0] != '-') break;
        if (arg == "-np") args[i] = "--np";
        if (arg == "-ppn" || arg == "-npernode") args[i] = "--ppn";  // Hydra's and mpirun's single dash
        if (std::find(with_value.begin(), with_value.end(), arg) != with_value.end()) ++i;  // its value
    }
    return args;
}

}  // namespace

ParseOutcome parse_options(const std::vector<std::string>& given, const Environment& env)
{
    std::vector<std::string> args = with_mpirun_spellings(given);
    Raw raw;
    CLI::App app{"s4bxi-launch"};
    app.set_help_flag();  // our own --help, with our own text
    app.prefix_command();  // stop at the program: its own options are not ours
    CLI::Option* np = app.add_option("-n,--np,-c", raw.np);  // -c: mpirun's other spelling
    CLI::Option* ppn = app.add_option("-N,--ppn,--npernode", raw.ppn);
    CLI::Option* platform = app.add_option("--platform", raw.platform);
    CLI::Option* cpu_model = app.add_option("--cpu-model", raw.cpu_model);
    CLI::Option* cpu_factor = app.add_option("--cpu-factor", raw.cpu_factor);
    CLI::Option* cpu_threshold = app.add_option("--cpu-threshold", raw.cpu_threshold);
    CLI::Option* memory_waits = app.add_option("--memory-waits", raw.memory_waits);
    CLI::Option* lockstep = app.add_option("--lockstep", raw.lockstep);
    CLI::Option* timeout = app.add_option("--timeout", raw.timeout);
    CLI::Option* deadlock_timeout = app.add_option("--deadlock-timeout", raw.deadlock_timeout);
    CLI::Option* service_ranks = app.add_option("--service-ranks", raw.service_ranks);
    CLI::Option* log_level = app.add_option("--log-level", raw.log_level);
    CLI::Option* summary = app.add_option("--summary", raw.summary);
    CLI::Option* simkernel = app.add_option("--simkernel", raw.simkernel);
    CLI::Option* preload = app.add_option("--preload", raw.preload);
    CLI::Option* trace = app.add_option("--trace", raw.trace);
    CLI::Option* timeline = app.add_option("--timeline", raw.timeline);
    CLI::Option* paje = app.add_option("--paje", raw.paje);
    CLI::Option* timeline_filter = app.add_option("--timeline-filter", raw.timeline_filter);
    CLI::Option* mpi_costs = app.add_option("--mpi-costs", raw.mpi_costs);
    app.add_flag("--calibrate", raw.calibrate);
    app.add_option("--set", raw.sets)->allow_extra_args(false);
    CLI::Option* network_model = app.add_option("--network-model", raw.network_model);
    CLI::Option* network_switch = app.add_option("--network-model-switch", raw.network_switch);
    app.add_flag("--print-config", raw.print_config);
    app.add_flag("-q,--quiet", raw.quiet);
    app.add_flag("--keep-run-dir", raw.keep);
    CLI::Option* listen = app.add_option("--listen", raw.listen);
    app.add_flag("-h,--help", raw.help);
    app.add_flag("--version", raw.version);
    for (CLI::Option* option : {np, ppn, platform, cpu_model, cpu_factor, cpu_threshold, memory_waits, lockstep,
                                timeout, deadlock_timeout, log_level, summary, simkernel, preload, trace, service_ranks,
                                timeline, paje, timeline_filter, mpi_costs, network_model, network_switch})
        option->take_last();

    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::ArgumentMismatch& e) {
        std::string what = e.what();
        std::string name = what.substr(0, what.find(':'));
        return error(fmt::format("option {} needs a value (see s4bxi-launch --help)", name));
    } catch (const CLI::ParseError& e) {
        return error(fmt::format("{} (see s4bxi-launch --help)", e.what()));
    }

    // The program and its arguments: what CLI11 did not consume. An explicit "--" is kept
    // by CLI11 as the first element; anything else starting with '-' is an option of ours
    // that CLI11 did not recognize.
    std::vector<std::string> command = app.remaining();
    bool separator = !command.empty() && command.front() == "--";
    if (separator) command.erase(command.begin());
    else if (!command.empty() && command.front().size() > 1 && command.front()[0] == '-')
        return error(fmt::format("unknown option '{}' (see s4bxi-launch --help)", command.front()));

    if (raw.help) {
        ParseOutcome outcome;
        outcome.kind = ParseOutcome::Kind::Help;
        outcome.text = help_text();
        return outcome;
    }
    if (raw.version) {
        ParseOutcome outcome;
        outcome.kind = ParseOutcome::Kind::Version;
        outcome.text = version_line();
        return outcome;
    }

    for (const auto& [name, value] : env)
        if (name.rfind("S4BXI_", 0) == 0 && !known_env_name(name))
            return error(fmt::format("unknown environment variable {} (known: S4BXI_PPN, S4BXI_PLATFORM, "
                                     "S4BXI_CPU_MODEL, S4BXI_CPU_FACTOR, S4BXI_CPU_THRESHOLD, S4BXI_MPI_COSTS, "
                                     "S4BXI_MEMORY_WAITS, "
                                     "S4BXI_LOCKSTEP, S4BXI_TIMEOUT, S4BXI_DEADLOCK_TIMEOUT, "
                                     "S4BXI_LOG_LEVEL, and the model's knobs listed by s4bxi-launch --print-config)",
                                     name));

    Options options;
    Checker check;

    // The model's knobs: checked here (nothing starts with a bad value), applied by the
    // server. Environment first, then --set in order; the server keeps that precedence.
    for (const auto& [name, value] : env) {
        const config::Key* key = config::find_env(name);
        if (!key) continue;
        config::Parsed parsed = config::parse_text(*key, value);
        if (!parsed.ok) {
            check.fail(name, value, parsed.error.c_str());
            continue;
        }
        options.knob_env.emplace_back(name, value);
    }
    // --network-model M is --set network.model=M, given before the other --set.
    if (network_model->count()) {
        if (std::string problem = config::network_model_problem(raw.network_model); !problem.empty()) {
            if (check.error.empty())
                check.error = fmt::format("invalid value '{}' for --network-model: {}", raw.network_model, problem);
        } else {
            raw.sets.insert(raw.sets.begin(), "network.model=" + raw.network_model);
        }
    }
    if (listen->count() && raw.listen.empty() && check.error.empty())
        check.error = "--listen wants an address: ADDR[:PORT]";
    if (network_switch->count()) {
        if (raw.network_switch != "dates" && raw.network_switch != "pcontrol") {
            if (check.error.empty())
                check.error = fmt::format("invalid value '{}' for --network-model-switch: dates or pcontrol",
                                          raw.network_switch);
        } else {
            raw.sets.insert(raw.sets.begin(), "network.switch=" + raw.network_switch);
        }
    }
    for (const std::string& set : raw.sets) {
        size_t eq = set.find('=');
        const config::Key* key = eq == std::string::npos ? nullptr : config::find_key(set.substr(0, eq));
        if (eq == std::string::npos || eq == 0) {
            if (check.error.empty())
                check.error = fmt::format("invalid --set '{}': expected KEY=VALUE, e.g. --set nic.quick_acks=true", set);
            continue;
        }
        if (!key) {
            if (check.error.empty())
                check.error = fmt::format("invalid --set '{}': unknown key '{}' (s4bxi-launch --print-config lists them)",
                                          set, set.substr(0, eq));
            continue;
        }
        config::Parsed parsed = config::parse_text(*key, std::string_view(set).substr(eq + 1));
        if (!parsed.ok) {
            check.fail("--set " + std::string(key->key), set.substr(eq + 1), parsed.error.c_str());
            continue;
        }
        options.sets.push_back(set);
    }
    if (trace->count()) {
        if (raw.trace.empty()) check.fail("--trace", raw.trace, "a directory");
        else options.trace_dir = raw.trace;
    }

    // Environment defaults first, then the command line on top.
    auto from_env = [&](const char* name) -> const std::string* {
        auto it = env.find(name);
        return it == env.end() ? nullptr : &it->second;
    };
    if (auto v = from_env("S4BXI_PPN")) check.integer_at_least("S4BXI_PPN", *v, 1, options.ppn);
    if (auto v = from_env("S4BXI_PLATFORM")) check.path("S4BXI_PLATFORM", *v, options.platform);
    if (auto v = from_env("S4BXI_CPU_MODEL")) check.cpu_model("S4BXI_CPU_MODEL", *v, options.cpu_model);
    if (auto v = from_env("S4BXI_CPU_FACTOR")) check.real("S4BXI_CPU_FACTOR", *v, true, options.cpu_factor);
    if (auto v = from_env("S4BXI_CPU_THRESHOLD"))
        check.real("S4BXI_CPU_THRESHOLD", *v, false, options.cpu_threshold);
    if (auto v = from_env("S4BXI_MPI_COSTS")) check.mpi_costs("S4BXI_MPI_COSTS", *v, options.mpi_costs);
    if (auto v = from_env("S4BXI_MEMORY_WAITS")) check.auto_on_off("S4BXI_MEMORY_WAITS", *v, options.memory_waits);
    if (auto v = from_env("S4BXI_LOCKSTEP")) check.auto_on_off("S4BXI_LOCKSTEP", *v, options.lockstep);
    if (auto v = from_env("S4BXI_TIMEOUT")) check.real("S4BXI_TIMEOUT", *v, false, options.timeout);
    if (auto v = from_env("S4BXI_DEADLOCK_TIMEOUT"))
        check.real("S4BXI_DEADLOCK_TIMEOUT", *v, true, options.deadlock_timeout);
    if (auto v = from_env("S4BXI_SERVICE_RANKS")) check.rank_list("S4BXI_SERVICE_RANKS", *v, options.service_ranks);
    if (auto v = from_env("S4BXI_LOG_LEVEL")) check.log_level("S4BXI_LOG_LEVEL", *v, options.log_level);

    if (np->count()) {
        int n = 0;
        check.integer_at_least("-n/--np", raw.np, 1, n);
        options.np = n;
    }
    if (ppn->count()) check.integer_at_least("--ppn", raw.ppn, 1, options.ppn);
    if (platform->count()) check.path("--platform", raw.platform, options.platform);
    if (cpu_model->count()) check.cpu_model("--cpu-model", raw.cpu_model, options.cpu_model);
    if (cpu_factor->count()) check.real("--cpu-factor", raw.cpu_factor, true, options.cpu_factor);
    if (cpu_threshold->count()) check.real("--cpu-threshold", raw.cpu_threshold, false, options.cpu_threshold);
    if (mpi_costs->count()) check.mpi_costs("--mpi-costs", raw.mpi_costs, options.mpi_costs);
    if (memory_waits->count()) check.auto_on_off("--memory-waits", raw.memory_waits, options.memory_waits);
    if (lockstep->count()) check.auto_on_off("--lockstep", raw.lockstep, options.lockstep);
    if (timeout->count()) check.real("--timeout", raw.timeout, false, options.timeout);
    if (deadlock_timeout->count())
        check.real("--deadlock-timeout", raw.deadlock_timeout, true, options.deadlock_timeout);
    if (service_ranks->count()) check.rank_list("--service-ranks", raw.service_ranks, options.service_ranks);
    if (options.np && !options.service_ranks.empty() && options.service_ranks.back() >= *options.np)
        check.fail("--service-ranks", std::to_string(options.service_ranks.back()),
                   fmt::format("ranks below the number of ranks ({})", *options.np).c_str());
    if (log_level->count()) check.log_level("--log-level", raw.log_level, options.log_level);
    if (summary->count()) check.path("--summary", raw.summary, options.summary_file);
    if (timeline->count()) check.path("--timeline", raw.timeline, options.timeline_file);
    if (paje->count()) check.path("--paje", raw.paje, options.paje_file);
    if (timeline_filter->count()) {
        try {
            timeline_filter::Filter filter = timeline_filter::parse(raw.timeline_filter);
            if (options.np && !filter.ranks.empty() && *std::max_element(filter.ranks.begin(), filter.ranks.end()) >= *options.np)
                throw std::invalid_argument(fmt::format("ranks below the number of ranks ({})", *options.np));
            if (!timeline->count() && !paje->count())
                throw std::invalid_argument("it filters --timeline or --paje, and neither is given");
            options.timeline_filter = raw.timeline_filter;
        } catch (const std::invalid_argument& e) {
            if (check.error.empty()) check.error = fmt::format("invalid --timeline-filter '{}': {}", raw.timeline_filter, e.what());
        }
    }
    if (simkernel->count()) check.path("--simkernel", raw.simkernel, options.simkernel);
    if (preload->count()) check.path("--preload", raw.preload, options.preload);
    if (!check.error.empty()) return error(check.error);

    options.quiet = raw.quiet;
    options.keep_run_dir = raw.keep;
    options.listen = raw.listen;
    options.print_config = raw.print_config;
    options.calibrate = raw.calibrate;

    if (options.calibrate) {
        if (!command.empty())
            return error(fmt::format("--calibrate runs nothing: remove '{}' (see s4bxi-launch --help)", command.front()));
        ParseOutcome outcome;
        outcome.kind = ParseOutcome::Kind::Calibrate;
        outcome.options = std::move(options);
        return outcome;
    }
    if (options.print_config) {
        if (!command.empty())
            return error(fmt::format("--print-config runs nothing: remove '{}' (see s4bxi-launch --help)",
                                     command.front()));
        ParseOutcome outcome;
        outcome.kind = ParseOutcome::Kind::PrintConfig;
        outcome.options = std::move(options);
        return outcome;
    }

    if (command.empty())
        return error(options.spawn_mode() ? "no program given (usage: s4bxi-launch -n N [options] PROGRAM [ARGS...])"
                                          : "no command given (usage: s4bxi-launch -n N [options] PROGRAM [ARGS...] "
                                            "or s4bxi-launch [options] -- COMMAND [ARGS...])");
    if (command.front().empty()) return error("the program name is empty");
    options.command = std::move(command);

    ParseOutcome outcome;
    outcome.kind = ParseOutcome::Kind::Run;
    outcome.options = std::move(options);
    return outcome;
}

}  // namespace s4bxi::launcher
