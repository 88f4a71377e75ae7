// s4bxi-launch: runs a command (or N ranks of a program) on the simulated cluster.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "calibrate/host_calibration.hpp"
#include "log.hpp"
#include "openmpi_env.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "run.hpp"
#include "s4bxi/server_flags.hpp"

extern char** environ;

using namespace s4bxi::launcher;

namespace {

// Children expect fds 0, 1 and 2 to exist; so do we (a pipe we create must not become
// "stderr" by accident).
void ensure_standard_fds()
{
    for (int fd = 0; fd < 3; ++fd)
        if (::fcntl(fd, F_GETFD) < 0) ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
}

// The summary file's directory must exist: better to know before a long run.
// An output file (`what`: "summary file", "timeline file"...) the run will write: its
// directory must exist and be writable, and it must not be a directory.
bool output_location_ok(const std::string& what, const std::string& file, std::string& error)
{
    std::filesystem::path path(file);
    std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        error = what + " '" + file + "': directory '" + dir.string() + "' does not exist";
        return false;
    }
    if (std::filesystem::is_directory(path, ec)) {
        error = what + " '" + file + "' is a directory";
        return false;
    }
    if (::access(dir.c_str(), W_OK) != 0) {
        error = what + " '" + file + "': directory '" + dir.string() + "' is not writable";
        return false;
    }
    return true;
}

// The server's --print-config for this plan (one parser for the platform and the
// overrides): printed on our standard output, or captured into `captured`. Its exit
// status (0, or 13 for a bad configuration).
int server_print_config(const RunPlan& plan, std::string* captured)
{
    std::vector<std::string> args = {plan.siblings.simkernel, s4bxi::server_flags::flag(s4bxi::server_flags::kPrintConfig)};
    if (plan.platform) {
        args.push_back(s4bxi::server_flags::flag(s4bxi::server_flags::kPlatform));
        args.push_back(*plan.platform);
    }
    for (std::string& arg : config_arguments(plan.options)) args.push_back(std::move(arg));
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int pipe_fds[2] = {-1, -1};
    if (captured && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        log::error("cannot start the simulation server: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    std::cout << std::flush;
    pid_t pid = ::fork();
    if (pid < 0) {
        log::error("cannot start the simulation server: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    if (pid == 0) {
        if (captured) ::dup2(pipe_fds[1], STDOUT_FILENO);
        ::execv(argv[0], argv.data());
        log::error("cannot execute the simulation server {}: {}", plan.siblings.simkernel, std::strerror(errno));
        ::_exit(kExitLauncherFailure);
    }
    if (captured) {
        ::close(pipe_fds[1]);
        char buffer[4096];
        ssize_t got;
        while ((got = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0)
            if (got > 0) captured->append(buffer, static_cast<size_t>(got));
            else if (errno != EINTR) break;
        ::close(pipe_fds[0]);
    }
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : kExitLauncherFailure;
}

// --print-config: the model's parameters as the server reads them, then the Open MPI
// environment the ranks would get.
int print_config(const RunPlan& plan)
{
    if (int status = server_print_config(plan, nullptr); status != 0) return status;

    std::vector<std::string> environment;
    for (char** entry = environ; *entry; ++entry) environment.emplace_back(*entry);
    auto settings = open_mpi_settings(plan.siblings.openmpi_components, environment, ::geteuid() == 0);
    // As comments, so that the print-out still reads back as a platform file.
    std::cout << "\n# Open MPI environment given to the command (mpirun, mpiexec):\n";
    if (plan.siblings.openmpi_components.empty())
        std::cout << "# the Portals components of Open MPI were not found (run tools/setup, or\n"
                     "# libexec/s4bxi/build-openmpi-portals4 of an installation): Open MPI would use\n"
                     "# its own transports, outside the simulation\n";
    for (const OpenMpiSetting& setting : settings)
        std::cout << fmt::format("#   {}={}  ({})\n", setting.name, setting.value,
                                 setting.user_set ? "from the environment" : "launcher default: " + setting.reason);
    return 0;
}

// The calibration tool (s4bxi-calibrate): beside the launcher in the build tree, beside
// the server in an installation. Empty when s4bxi was built without an MPI compiler.
std::string calibration_tool(const std::string& launcher_dir, const Siblings& siblings)
{
    for (const std::filesystem::path& dir :
         {std::filesystem::path(launcher_dir), std::filesystem::path(siblings.simkernel).parent_path()}) {
        std::filesystem::path tool = dir / "s4bxi-calibrate";
        if (::access(tool.c_str(), X_OK) == 0) return tool.string();
    }
    return {};
}

// The platform's core speed, as the server reads it (its --print-config).
std::optional<double> platform_core_speed(const RunPlan& plan)
{
    std::string config;
    if (server_print_config(plan, &config) != 0) return std::nullopt;
    std::optional<double> speed;
    std::istringstream lines(config);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("platform.core_speed", 0) == 0)
            if (size_t eq = line.find('='); eq != std::string::npos) speed = std::strtod(line.c_str() + eq + 1, nullptr);
    return speed;
}

// --calibrate: measures this host afresh, caches it, prints the figures and the factor.
int calibrate(const RunPlan& plan, const std::string& tool)
{
    if (tool.empty()) {
        log::error("not supported yet: --calibrate without s4bxi-calibrate, which is built only when an MPI "
                   "compiler (mpicc) is found");
        return kExitLauncherFailure;
    }
    std::string error;
    auto calibration = host_calibration(tool, true, error);
    if (!calibration) {
        log::error("{}", error);
        return kExitLauncherFailure;
    }
    auto speed = platform_core_speed(plan);
    if (!speed || *speed <= 0) {
        log::error("cannot read the platform's core_speed (s4bxi-launch --print-config shows the configuration)");
        return kExitLauncherFailure;
    }
    double factor = calibration->flops / *speed;
    std::cout << fmt::format("host core              {:.4g} flop/s on the reference kernel\n", calibration->flops)
              << fmt::format("platform core_speed    {:.4g} flop/s\n", *speed)
              << fmt::format("cpu factor             {:.4g}   (s4bxi-launch --cpu-factor {:.4g} ...: a second of this "
                             "host's CPU is {:.4g} s on the platform's cores)\n",
                             factor, factor, factor)
              << fmt::format("MPI library costs      {}   (ns of this host's CPU per call, on a warm core)\n",
                             calibration->mpi_costs)
              << fmt::format("cached in              {}\n",
                             calibration->source.substr(calibration->source.find(" in ") + 4));
    return 0;
}

// The MPI library's costs the ranks are charged (S4BXI_MPI_COST_TABLE), as --mpi-costs
// asks: empty for its measured CPU time.
std::string mpi_cost_table(const RunPlan& plan, const std::string& tool, std::string& source)
{
    const std::string& asked = plan.options.mpi_costs;
    if (plan.options.cpu_model == CpuModel::Zero || asked == "measured") return {};
    std::string table;
    if (tool.empty()) {
        log::warning("the MPI library's calls are charged their measured CPU time: s4bxi-calibrate was not built "
                     "(no mpicc); see docs/time.md");
    } else {
        std::string error;
        auto calibration = host_calibration(tool, false, error);
        if (!calibration)
            log::warning("the MPI library's calls are charged their measured CPU time: {}", error);
        else {
            table = calibration->mpi_costs;
            source = calibration->source;
        }
    }
    if (asked != "calibrated") {  // explicit costs, on top of the calibrated ones
        table = table.empty() ? asked : table + "," + asked;
        source = source.empty() ? "--mpi-costs" : source + " and --mpi-costs";
    }
    return table;
}

}  // namespace

int main(int argc, char** argv)
{
    ensure_standard_fds();
    std::vector<std::string> args(argv + 1, argv + argc);
    Environment env;
    for (char** entry = environ; *entry; ++entry) {
        const char* eq = std::strchr(*entry, '=');
        if (!eq) continue;
        env.emplace(std::string(*entry, static_cast<size_t>(eq - *entry)), std::string(eq + 1));
    }

    ParseOutcome outcome = parse_options(args, env);
    switch (outcome.kind) {
    case ParseOutcome::Kind::Help:
        std::cout << outcome.text << std::flush;
        return 0;
    case ParseOutcome::Kind::Version:
        std::cout << outcome.text << std::endl;
        return 0;
    case ParseOutcome::Kind::Error:
        log::error("{}", outcome.text);
        return kExitUsage;
    case ParseOutcome::Kind::Run:
    case ParseOutcome::Kind::PrintConfig:
    case ParseOutcome::Kind::Calibrate:
        break;
    }

    RunPlan plan;
    plan.options = outcome.options;
    log::set_level(plan.options.log_level);

    if (outcome.kind == ParseOutcome::Kind::Run) {
        auto program = resolve_program(plan.options.command.front(), std::getenv("PATH"));
        if (!program) {
            log::error("{}", program.error);
            return kExitUsage;
        }
        plan.program = *program.value;
    }

    // Where this launcher is: its siblings, and the shipped platforms a name may refer to.
    auto self = self_directory();

    if (plan.options.platform) {
        auto platform = find_platform(*plan.options.platform, self ? platform_dirs(*self.value) : std::vector<std::string>{});
        if (!platform) {
            log::error("{}", platform.error);
            return kExitUsage;
        }
        plan.platform = *platform.value;
    }

    for (auto [what, file] : {std::pair{"summary file", &plan.options.summary_file},
                              {"timeline file", &plan.options.timeline_file},
                              {"Paje file", &plan.options.paje_file}}) {
        std::string error;
        if (*file && !output_location_ok(what, **file, error)) {
            log::error("{}", error);
            return kExitUsage;
        }
    }

    // Explicit siblings are user input: check them like the other paths.
    if (plan.options.simkernel && ::access(plan.options.simkernel->c_str(), X_OK) != 0) {
        log::error("--simkernel '{}' is not an executable file", *plan.options.simkernel);
        return kExitUsage;
    }
    if (plan.options.preload && ::access(plan.options.preload->c_str(), R_OK) != 0) {
        log::error("--preload '{}' is not a readable file", *plan.options.preload);
        return kExitUsage;
    }

    if (!self) {
        log::error("{}", self.error);
        return kExitLauncherFailure;
    }
    auto siblings = find_siblings(*self.value, default_layout(), plan.options.simkernel, plan.options.preload);
    if (!siblings) {
        log::error("{}", siblings.error);
        return kExitLauncherFailure;
    }
    plan.siblings = *siblings.value;

    if (outcome.kind == ParseOutcome::Kind::PrintConfig) return print_config(plan);
    std::string tool = calibration_tool(*self.value, plan.siblings);
    if (outcome.kind == ParseOutcome::Kind::Calibrate) return calibrate(plan, tool);
    plan.mpi_cost_table = mpi_cost_table(plan, tool, plan.mpi_cost_source);
    return run(plan, environ);
}
