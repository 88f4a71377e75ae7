#include "calibrate/host_calibration.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "s4bxi/mpi_costs.hpp"

extern char** environ;

namespace s4bxi::launcher {

namespace fs = std::filesystem;

namespace {

std::string cache_root()
{
    if (const char* dir = std::getenv("S4BXI_CACHE_DIR"); dir && *dir) return dir;
    if (const char* dir = std::getenv("XDG_CACHE_HOME"); dir && *dir) return std::string(dir) + "/s4bxi";
    const char* home = std::getenv("HOME");
    return std::string(home && *home ? home : "/tmp") + "/.cache/s4bxi";
}

std::string cpu_name()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 1);
    return "unknown";
}

// One cache file per host, processor and calibration tool (a rebuilt tool, another MPI
// library behind it: measured again).
std::string cache_file(const std::string& tool)
{
    char host[256] = "host";
    gethostname(host, sizeof host - 1);
    struct stat st{};
    stat(tool.c_str(), &st);
    std::string key = fmt::format("{}|{}|{}|{}", host, cpu_name(), st.st_size, st.st_mtim.tv_sec);
    return fmt::format("{}/calibration/{}-{:016x}.txt", cache_root(), host, std::hash<std::string>{}(key));
}

// Runs the tool natively: no preloaded library, none of the run's or Open MPI's launch
// variables, Open MPI's self transport, root allowed.
std::optional<std::string> run_tool(const std::string& tool, std::string& error)
{
    std::vector<std::string> env;
    for (char** entry = environ; *entry; ++entry) {
        std::string_view kv(*entry);
        if (kv.starts_with("LD_PRELOAD=") || kv.starts_with("S4BXI_") || kv.starts_with("OMPI_") ||
            kv.starts_with("PMIX_") || kv.starts_with("PMI_") || kv.starts_with("OPAL_") || kv.starts_with("ORTE_"))
            continue;
        env.emplace_back(kv);
    }
    for (const char* setting : {"OMPI_MCA_pml=ob1", "OMPI_MCA_btl=self", "OMPI_MCA_mtl=^portals4",
                                "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"})
        env.emplace_back(setting);
    std::vector<char*> envp;
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string path = tool;
    char* argv[] = {path.data(), nullptr};

    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) {
        error = fmt::format("cannot create a pipe: {}", std::strerror(errno));
        return std::nullopt;
    }
    pid_t pid = fork();
    if (pid < 0) {
        error = fmt::format("cannot fork: {}", std::strerror(errno));
        return std::nullopt;
    }
    if (pid == 0) {
        dup2(out[1], 1);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        execve(argv[0], argv, envp.data());
        _exit(127);
    }
    close(out[1]);
    std::string text;
    char buffer[512];
    for (ssize_t n; (n = read(out[0], buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        text.append(buffer, static_cast<size_t>(n));
    }
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        error = fmt::format("the calibration tool {} failed ({})", tool,
                            WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status)));
        return std::nullopt;
    }
    return text;
}

}  // namespace

std::optional<HostCalibration> parse_calibration(const std::string& text)
{
    HostCalibration result;
    std::istringstream in(text);
    std::string line;
    bool flops = false, mpi = false;
    while (std::getline(in, line)) {
        if (line.rfind("flops=", 0) == 0) {
            char* end = nullptr;
            result.flops = std::strtod(line.c_str() + 6, &end);
            flops = end && *end == '\0' && result.flops > 0;
        } else if (line.rfind("mpi=", 0) == 0) {
            result.mpi_costs = line.substr(4);
            mpi = mpicost::parse_costs(result.mpi_costs).has_value();
        }
    }
    if (!flops || !mpi) return std::nullopt;
    return result;
}

std::optional<HostCalibration> host_calibration(const std::string& tool, bool fresh, std::string& error)
{
    std::string file = cache_file(tool);
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    // One launch measures, the others wait for its result: measurements side by side would
    // take each other's cores.
    int lock = open((file + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock >= 0) flock(lock, LOCK_EX);
    auto release = [&] {
        if (lock >= 0) close(lock);
    };
    if (!fresh) {
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        if (auto cached = parse_calibration(text.str())) {
            release();
            cached->source = file;
            return cached;
        }
    }
    auto text = run_tool(tool, error);
    std::optional<HostCalibration> measured = text ? parse_calibration(*text) : std::nullopt;
    if (text && !measured) error = fmt::format("the calibration tool {} printed what it should not: {}", tool, *text);
    if (measured) {
        std::string temporary = file + ".new";
        std::ofstream(temporary) << *text;
        fs::rename(temporary, file, ec);
        measured->source = "measured now, cached in " + file;
    }
    release();
    return measured;
}

}  // namespace s4bxi::launcher
