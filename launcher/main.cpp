// s4bxi-launch: runs a command (or N ranks of a program) on the simulated cluster.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "log.hpp"
#include "openmpi_env.hpp"
#include "options.hpp"
#include "paths.hpp"
#include "run.hpp"

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

// --print-config: the server reads the platform and the overrides (one parser for both
// uses) and prints the model's parameters; then the Open MPI environment the ranks would
// get. Its status is the server's (0, or 13 for a bad configuration).
int print_config(const RunPlan& plan)
{
    std::vector<std::string> args = {plan.siblings.simkernel, "--print-config"};
    if (plan.platform) {
        args.emplace_back("--platform");
        args.push_back(*plan.platform);
    }
    for (std::string& arg : config_arguments(plan.options)) args.push_back(std::move(arg));
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::cout << std::flush;
    pid_t pid = ::fork();
    if (pid < 0) {
        log::error("cannot start the simulation server: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    if (pid == 0) {
        ::execv(argv[0], argv.data());
        log::error("cannot execute the simulation server {}: {}", plan.siblings.simkernel, std::strerror(errno));
        ::_exit(kExitLauncherFailure);
    }
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(wstatus)) return kExitLauncherFailure;
    if (WEXITSTATUS(wstatus) != 0) return WEXITSTATUS(wstatus);

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
    return run(plan, environ);
}
