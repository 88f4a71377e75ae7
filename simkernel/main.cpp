// s4bxi-simkernel: started by s4bxi-launch, never by hand (see docs/usage.md).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

#include "observation/progress_line.hpp"
#include "platform/config_override.hpp"
#include "s4bxi/server_flags.hpp"
#include "s4bxi/timeline_filter.hpp"
#include "server.hpp"

int main(int argc, char** argv)
{
    using namespace s4bxi::server_flags;
    s4bxi::sim::Config config;
    s4bxi::sim::Overrides& overrides = s4bxi::sim::command_line_overrides();
    std::string cpu_model(kCpuModelMeasured);
    std::string memory_waits(kAuto);
    std::string lockstep(kAuto);
    bool print_config = false;
    CLI::App app{"s4bxi simulation server (started by s4bxi-launch)"};
    CLI::Option* run_dir = app.add_option(flag(kRunDir), config.run_dir, "private run directory");
    app.add_option(flag(kWorldSize), config.world_size, "number of ranks (0: learned from the ranks)")->check(CLI::NonNegativeNumber);
    app.add_option(flag(kPpn), config.ppn, "ranks per node")->check(CLI::PositiveNumber);
    app.add_option(flag(kPlatform), config.platform_file, "platform description (TOML)");
    app.add_option(flag(kCpuModel), cpu_model, "measured or zero")->check(CLI::IsMember(spellings(kCpuModels)));
    app.add_option(flag(kCpuFactor), config.cpu_factor, "multiplier of measured CPU time")->check(CLI::PositiveNumber);
    app.add_option(flag(kCpuThreshold), config.cpu_threshold, "compute shorter than this is ignored (s)")->check(CLI::NonNegativeNumber);
    app.add_option(flag(kMemoryWaits), memory_waits, "zero CPU model: a rank computing with no Portals call may wait on "
                   "its memory: auto (OpenSHMEM programs), on, off")->check(CLI::IsMember(spellings(kAutoOnOff)));
    app.add_option(flag(kLockstep), lockstep, "zero CPU model: the threads of a rank run one at a time, in an order of "
                   "its own: auto (OpenSHMEM programs), on, off")->check(CLI::IsMember(spellings(kAutoOnOff)));
    app.add_option(flag(kServiceRanks), config.service_ranks, "ranks whose messages use the service VNs")
        ->delimiter(',')
        ->check(CLI::NonNegativeNumber);
    app.add_option(flag(kLogLevel), config.log_level)->check(CLI::IsMember(spellings(kLogLevels)));
    app.add_option(flag(kSummaryOut), config.summary_out, "where to write the JSON summary");
    app.add_option(flag(kListen), config.listen, "ADDR[:PORT] to accept ranks of other machines on "
                   "(the run's secret in S4BXI_RUN_SECRET)");
    app.add_option(flag(kReadyFd), config.ready_fd, "pipe to signal readiness on");
    app.add_option(flag(kRegisterTimeout), config.register_timeout, "wall seconds for every rank to register")->check(CLI::PositiveNumber);
    app.add_option(flag(kDeadlockTimeout), config.outside_deadlock_timeout,
                   "wall seconds a rank blocked outside the simulation may hold every other rank")->check(CLI::PositiveNumber);
    // The configuration overrides forwarded by the launcher (docs/model.md, "Configuration").
    std::vector<std::string> env;
    app.add_option(flag(kSet), overrides.sets, "KEY=VALUE: override a platform key (repeatable)")->take_all();
    app.add_option(flag(kEnv), env, "S4BXI_NAME=VALUE: a knob's environment variable (repeatable)")->take_all();
    app.add_option(flag(kTrace), overrides.trace_folder, "write CSV traces into this directory");
    std::string timeline_filter;
    app.add_option(flag(kTimeline), config.observation.timeline_file, "write the timeline (Chrome trace-event JSON)");
    app.add_option(flag(kPaje), config.observation.paje_file, "write the timeline in Paje");
    app.add_option(flag(kTimelineFilter), timeline_filter, "ranks=LIST;time=START:END");
    bool progress = false;
    app.add_flag(flag(kProgress), progress, "show a progress line on stderr (a terminal)");
    app.add_flag(flag(kPrintConfig), print_config, "print the effective configuration and exit");
    try {
        app.parse(argc, argv);
        if (!print_config && run_dir->count() == 0) throw CLI::RequiredError(flag(kRunDir));
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? 0 : s4bxi::sim::kExitConfig;
    }
    try {
        s4bxi::timeline_filter::Filter filter = s4bxi::timeline_filter::parse(timeline_filter);
        config.observation.ranks = filter.ranks;
        config.observation.window_start = filter.window_start;
        config.observation.window_end = filter.window_end;
    } catch (const std::invalid_argument& error) {
        fmt::print(stderr, "s4bxi-simkernel: error: --timeline-filter '{}': {}\n", timeline_filter, error.what());
        return s4bxi::sim::kExitConfig;
    }
    if (progress) s4bxi::sim::observe::enable_progress_line();
    for (const std::string& entry : env) {
        size_t eq = entry.find('=');
        if (eq == std::string::npos) {
            fmt::print(stderr, "s4bxi-simkernel: error: --env '{}': expected NAME=VALUE\n", entry);
            return s4bxi::sim::kExitConfig;
        }
        overrides.env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    if (print_config) {
        try {
            s4bxi::sim::PlatformSpec spec = s4bxi::sim::load_platform_file(config.platform_file);
            s4bxi::sim::apply_overrides(spec, overrides);
            std::cout << s4bxi::sim::format_config(spec) << std::flush;
            return 0;
        } catch (const std::exception& error) {
            fmt::print(stderr, "s4bxi-simkernel: error: {}\n", error.what());
            return s4bxi::sim::kExitConfig;
        }
    }
    config.cpu_model = cpu_model == kCpuModelZero ? s4bxi::wire::CpuModel::Zero : s4bxi::wire::CpuModel::Measured;
    using ForRanks = s4bxi::sim::Config::ForRanks;
    auto for_ranks = [](const std::string& word) {
        return word == kOn ? ForRanks::On : word == kOff ? ForRanks::Off : ForRanks::Auto;
    };
    config.memory_waits = for_ranks(memory_waits);
    config.lockstep = for_ranks(lockstep);
    return s4bxi::sim::run_server(std::move(config));
}
