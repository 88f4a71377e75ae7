// s4bxi-simkernel: started by s4bxi-launch, never by hand (see docs/usage.md).
#include <CLI/CLI.hpp>

#include "server.hpp"

int main(int argc, char** argv)
{
    s4bxi::sim::Config config;
    std::string cpu_model = "measured";
    CLI::App app{"s4bxi simulation server (started by s4bxi-launch)"};
    app.add_option("--run-dir", config.run_dir, "private run directory")->required();
    app.add_option("--world-size", config.world_size, "number of ranks (0: learned from the ranks)")->check(CLI::NonNegativeNumber);
    app.add_option("--ppn", config.ppn, "ranks per node")->check(CLI::PositiveNumber);
    app.add_option("--platform", config.platform_file, "platform description (TOML)");
    app.add_option("--cpu-model", cpu_model, "measured or zero")->check(CLI::IsMember({"measured", "zero"}));
    app.add_option("--cpu-factor", config.cpu_factor, "multiplier of measured CPU time")->check(CLI::PositiveNumber);
    app.add_option("--cpu-threshold", config.cpu_threshold, "compute shorter than this is ignored (s)")->check(CLI::NonNegativeNumber);
    app.add_option("--log-level", config.log_level)->check(CLI::IsMember({"error", "warning", "info", "debug"}));
    app.add_option("--summary-out", config.summary_out, "where to write the JSON summary");
    app.add_option("--ready-fd", config.ready_fd, "pipe to signal readiness on");
    app.add_option("--register-timeout", config.register_timeout, "wall seconds for every rank to register")->check(CLI::PositiveNumber);
    app.add_option("--deadlock-timeout", config.outside_deadlock_timeout,
                   "wall seconds a rank blocked outside the simulation may hold every other rank")->check(CLI::PositiveNumber);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& error) {
        return app.exit(error) == 0 ? 0 : s4bxi::sim::kExitConfig;
    }
    config.cpu_model = cpu_model == "zero" ? s4bxi::wire::CpuModel::Zero : s4bxi::wire::CpuModel::Measured;
    return s4bxi::sim::run_server(std::move(config));
}
