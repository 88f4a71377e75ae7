#include "run.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "log.hpp"
#include "openmpi_env.hpp"
#include "proc.hpp"
#include "remote_machines.hpp"
#include "s4bxi/remote_wire.hpp"
#include "s4bxi/server_flags.hpp"
#include "summary.hpp"
#include "s4bxi/summary_keys.hpp"

namespace s4bxi::launcher {


namespace summary = s4bxi::summary;
namespace key = s4bxi::summary::key;

namespace {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

TimePoint after(double seconds)
{
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double seconds_since(TimePoint start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Exit status as a shell reports it: the exit code, or 128 + signal.
int decode_status(int wstatus)
{
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return 1;
}

std::string describe_status(int wstatus)
{
    if (WIFSIGNALED(wstatus))
        return fmt::format("was killed by {}{}", signal_name(WTERMSIG(wstatus)),
                           WCOREDUMP(wstatus) ? " (core dumped)" : "");
    return fmt::format("exited with status {}", decode_status(wstatus));
}

// argv/envp arrays for execve, built before fork (the child only calls async-signal-safe
// functions).
struct CStrings {
    std::vector<std::string> storage;
    std::vector<char*> pointers;

    explicit CStrings(std::vector<std::string> strings) : storage(std::move(strings))
    {
        for (auto& s : storage) pointers.push_back(s.data());
        pointers.push_back(nullptr);
    }
    char** get() { return pointers.data(); }
};

void write_stderr(const char* text)
{
    ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

struct Child {
    pid_t pid = -1;
    int rank = -1;  // -1 in command mode
    bool alive = true;
    int wstatus = 0;
};

enum class ServerStage { Running, WaitingExit, Terminated, Killed };
enum class GraceReason { None, ServerEnded, Interrupted, RankFailed };

class Supervisor {
public:
    Supervisor(const RunPlan& plan, char** environment) : plan_(plan), environment_(environment) {}
    int run();

private:
    // Set-up and tear-down.
    bool setup_signals();
    void restore_signals_in_child() const;
    bool make_run_dir();
    void remove_run_dir();

    // The server.
    bool start_server();
    int wait_server_ready();  // 0 when ready, else the exit status to return
    void signal_server(int signal);

    // The command or the ranks.
    std::vector<std::string> child_environment() const;
    int spawn_command();  // 0 on success, else the exit status to return
    pid_t spawn(const std::vector<std::string>& argv, CStrings& envp, pid_t pgid, bool null_stdin, int& exec_errno);
    void stop_command();

    // Supervision.
    void supervise();
    void drain_signals();
    void reap_children();
    void on_exit(pid_t pid, int wstatus);
    void on_interrupt(int signal);
    void check_deadlines();
    std::optional<TimePoint> next_deadline() const;
    void wait_for_events(std::optional<TimePoint> deadline);
    void kill_everything_left();
    int exit_status() const;
    bool command_failed() const;  // the command (or a rank) ended with an error
    void report_summary(int status);

    const RunPlan& plan_;
    char** environment_;
    std::string secret_;  // the run's, when it listens for other machines (draw_secret)
    std::string listen_address_;  // where it listens, as the server bound it
    std::string agent_;           // s4bxi-agent, which ranks of other machines start
    TimePoint start_ = Clock::now();
    pid_t self_ = ::getpid();

    sigset_t old_mask_{};
    struct sigaction old_sigpipe_ {};
    int signal_fd_ = -1;
    int null_fd_ = -1;
    int ready_fd_ = -1;

    std::string run_dir_;
    std::string socket_path_;
    std::string summary_path_;

    pid_t server_pid_ = -1;
    bool server_alive_ = false;
    int server_wstatus_ = 0;
    bool server_signaled_by_us_ = false;
    ServerStage server_stage_ = ServerStage::Running;
    std::optional<TimePoint> server_deadline_;
    bool server_failed_during_run_ = false;

    std::vector<Child> children_;
    size_t children_alive_ = 0;
    pid_t command_pgid_ = -1;
    bool stopping_command_ = false;
    std::optional<int> first_rank_failure_;
    std::optional<int> abort_status_;  // a rank's PMI_Abort ended the run with it
    std::optional<TimePoint> command_grace_;
    double server_grace_ = kServerExitGrace;  // of the WaitingExit stage in progress
    GraceReason grace_reason_ = GraceReason::None;

    std::optional<TimePoint> wall_deadline_;
    bool timed_out_ = false;
    int interrupted_ = 0;
    int launcher_failure_ = 0;
    std::string launcher_error_;
};

bool Supervisor::setup_signals()
{
    sigset_t set;
    sigemptyset(&set);
    for (int signal : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, signal);
    if (::sigprocmask(SIG_BLOCK, &set, &old_mask_) != 0) return false;
    signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (signal_fd_ < 0) return false;
    // A closed stderr must not kill us before we have cleaned up.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &old_sigpipe_);
    return true;
}

void Supervisor::restore_signals_in_child() const
{
    // Blocked signals and ignored dispositions survive exec: give the child what we got.
    ::sigaction(SIGPIPE, &old_sigpipe_, nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

// 32 bytes from the kernel's random source, in hex (s4bxi/remote_wire.hpp).
bool Supervisor::make_run_dir()
{
    std::vector<std::string> bases;
    for (const char* name : {"XDG_RUNTIME_DIR", "TMPDIR"})
        if (const char* value = std::getenv(name); value && *value) bases.emplace_back(value);
    bases.emplace_back("/tmp");
    const size_t max_socket_path = sizeof(sockaddr_un::sun_path) - 1;
    for (std::string base : bases) {
        while (base.size() > 1 && base.back() == '/') base.pop_back();
        std::string pattern = base + "/s4bxi-XXXXXX";
        if (pattern.size() + std::strlen("/simkernel.sock") > max_socket_path) {
            log::debug("run directory base {} is too long for a unix socket path; trying the next one", base);
            continue;
        }
        std::vector<char> buffer(pattern.begin(), pattern.end());
        buffer.push_back('\0');
        if (::mkdtemp(buffer.data()) == nullptr) {
            log::debug("cannot create a run directory in {}: {}", base, std::strerror(errno));
            continue;
        }
        run_dir_ = buffer.data();
        ::chmod(run_dir_.c_str(), 0700);
        socket_path_ = run_dir_ + "/simkernel.sock";
        summary_path_ = run_dir_ + "/summary.json";
        log::debug("run directory {}", run_dir_);
        return true;
    }
    return false;
}

void Supervisor::remove_run_dir()
{
    if (run_dir_.empty()) return;
    if (plan_.options.keep_run_dir) {
        log::line(LogLevel::Info, fmt::format("run directory kept: {}", run_dir_));
        return;
    }
    std::error_code ec;
    std::filesystem::remove_all(run_dir_, ec);
    if (ec) log::warning("cannot remove the run directory {}: {}", run_dir_, ec.message());
}

bool Supervisor::start_server()
{
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) {
        log::error("cannot create a pipe: {}", std::strerror(errno));
        return false;
    }
    using namespace server_flags;
    const Options& o = plan_.options;
    std::vector<std::string> args = {
        plan_.siblings.simkernel,
        flag(kRunDir), run_dir_,
        flag(kWorldSize), std::to_string(o.world_size()),
        flag(kPpn), std::to_string(o.ppn),
        flag(kCpuModel), std::string(to_string(o.cpu_model)),
        flag(kCpuFactor), fmt::format("{}", o.cpu_factor),
        flag(kCpuThreshold), fmt::format("{}", o.cpu_threshold),
        flag(kMemoryWaits), o.memory_waits,
        flag(kLockstep), o.lockstep,
        flag(kLogLevel), std::string(to_string(o.log_level)),
        flag(kDeadlockTimeout), fmt::format("{}", o.deadlock_timeout),
        flag(kSummaryOut), summary_path_,
        flag(kReadyFd), std::to_string(ready[1]),
    };
    // The progress line: only where someone watches, and not under -q.
    if (!o.quiet && ::isatty(STDERR_FILENO) == 1) args.push_back(flag(kProgress));
    if (!o.service_ranks.empty()) {
        args.push_back(flag(kServiceRanks));
        args.push_back(fmt::format("{}", fmt::join(o.service_ranks, ",")));
    }
    if (plan_.platform) {
        args.push_back(flag(kPlatform));
        args.push_back(*plan_.platform);
    }
    if (!o.listen.empty()) {
        args.push_back(flag(kListen));
        args.push_back(o.listen);
    }
    for (std::string& arg : config_arguments(o)) args.push_back(std::move(arg));
    log::debug("starting {}", fmt::join(args, " "));
    CStrings argv(args);
    // The server's environment: the launcher's, and the run's secret when it listens.
    const std::string secret_entry = std::string(remote::kSecretVariable) + "=";
    std::vector<std::string> server_env;
    for (char** entry = environment_; entry && *entry; ++entry)
        if (!std::string_view(*entry).starts_with(secret_entry)) server_env.emplace_back(*entry);
    if (!secret_.empty()) server_env.push_back(secret_entry + secret_);
    CStrings envp(std::move(server_env));

    pid_t pid = ::fork();
    if (pid < 0) {
        log::error("cannot fork: {}", std::strerror(errno));
        ::close(ready[0]);
        ::close(ready[1]);
        return false;
    }
    if (pid == 0) {
        // Own process group: a Ctrl-C on the terminal reaches the launcher, which decides.
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != self_) ::_exit(127);
        restore_signals_in_child();
        ::dup2(null_fd_, STDIN_FILENO);
        ::dup2(STDERR_FILENO, STDOUT_FILENO);  // the command's stdout stays the command's
        ::fcntl(ready[1], F_SETFD, 0);          // the ready fd is inherited by the server
        ::execve(argv.get()[0], argv.get(), envp.get());
        write_stderr("s4bxi-launch: error: cannot execute the simulation server: ");
        write_stderr(std::strerror(errno));
        write_stderr("\n");
        ::_exit(127);
    }
    ::setpgid(pid, pid);
    ::close(ready[1]);
    ready_fd_ = ready[0];
    server_pid_ = pid;
    server_alive_ = true;
    log::debug("simulation server started (pid {})", pid);
    return true;
}

void Supervisor::signal_server(int signal)
{
    if (!server_alive_) return;
    server_signaled_by_us_ = true;
    ::kill(server_pid_, signal);
}

int Supervisor::wait_server_ready()
{
    // A --timeout longer than the usual limit is the user's word that the server may start
    // slowly (under valgrind, behind a --simkernel wrapper).
    const double ready_limit = std::max(kServerReadyTimeout, plan_.options.timeout);
    TimePoint ready_deadline = after(ready_limit);
    bool ready = false;
    bool failed = false;  // the server closed the pipe or exited
    while (!ready && !failed) {
        TimePoint deadline = ready_deadline;
        if (wall_deadline_) deadline = std::min(deadline, *wall_deadline_);
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (remaining <= 0) break;
        pollfd fds[2] = {{ready_fd_, POLLIN, 0}, {signal_fd_, POLLIN, 0}};
        int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(remaining + 1, 60'000)));
        if (n < 0 && errno != EINTR) {
            log::error("poll failed: {}", std::strerror(errno));
            failed = true;
            break;
        }
        if (n <= 0) continue;
        if (fds[0].revents) {
            char byte;
            ssize_t got = ::read(ready_fd_, &byte, 1);
            if (got == 1) ready = true;
            else if (got == 0 || (errno != EINTR && errno != EAGAIN)) failed = true;
        }
        if (fds[1].revents) {
            drain_signals();
            if (!server_alive_ && !ready) failed = true;
            if (interrupted_) break;
        }
    }
    ::close(ready_fd_);
    ready_fd_ = -1;
    if (ready) {
        log::debug("simulation server ready (socket {})", socket_path_);
        if (!plan_.options.listen.empty()) {  // where the agents of other machines connect (docs/multi-host.md)
            listen_address_ = read_listen_address(run_dir_);
            if ((agent_ = find_agent(plan_.siblings.simkernel)).empty())
                log::warning("no s4bxi-agent beside {}: ranks on other machines cannot join", plan_.siblings.simkernel);
        }
        return 0;
    }

    int status = kExitLauncherFailure;
    if (interrupted_) {
        status = 128 + interrupted_;
    } else if (failed) {
        // The server has printed its diagnosis; collect its status.
        if (server_alive_) {
            TimePoint limit = after(kServerTermGrace);
            while (server_alive_ && Clock::now() < limit) wait_for_events(limit);
        }
        if (!server_alive_) {
            int code = decode_status(server_wstatus_);
            log::error("the simulation server failed to start (it {})", describe_status(server_wstatus_));
            if (code != 0) status = code;
        } else {
            log::error("the simulation server failed to start (it closed its ready pipe)");
        }
    } else if (wall_deadline_ && Clock::now() >= *wall_deadline_) {
        timed_out_ = true;
        status = kExitTimeout;
        log::error("wall-clock timeout of {} s exceeded", plan_.options.timeout);
    } else {
        log::error("the simulation server did not become ready within {} s (a longer --timeout allows more)",
                   ready_limit);
    }
    if (server_alive_) signal_server(SIGKILL);
    return status;
}

std::vector<std::string> Supervisor::child_environment() const
{
    std::vector<std::string> env;
    std::string old_preload;
    for (char** entry = environment_; entry && *entry; ++entry) {
        std::string_view kv(*entry);
        std::string_view name = kv.substr(0, kv.find('='));
        if (name == "LD_PRELOAD") {
            old_preload = std::string(kv.substr(std::min(kv.size(), name.size() + 1)));
            continue;
        }
        // Our own variables are set below per child; a stale S4BXI_RANK_PID (nested run)
        // would make every rank passive.
        if (std::find(internal_env_names().begin(), internal_env_names().end(), name) != internal_env_names().end())
            continue;
        env.emplace_back(kv);
    }
    std::string preload = "LD_PRELOAD=" + plan_.siblings.library;
    if (!old_preload.empty()) preload += ":" + old_preload;
    env.push_back(preload);
    env.push_back("S4BXI_SOCKET=" + socket_path_);
    if (!secret_.empty()) env.push_back(std::string(remote::kSecretVariable) + "=" + secret_);
    if (!listen_address_.empty()) add_remote_environment(env, listen_address_, agent_, !plan_.mpi_cost_table.empty());
    if (!plan_.mpi_cost_table.empty()) env.push_back("S4BXI_MPI_COST_TABLE=" + plan_.mpi_cost_table);
    for (const OpenMpiSetting& setting : open_mpi_settings(plan_.siblings.openmpi_components, env, ::geteuid() == 0))
        if (!setting.user_set) env.push_back(setting.name + "=" + setting.value);
    // Under the zero CPU model a thread of GCC's OpenMP runtime waits in a futex at once
    // rather than spinning first: a spin costs no simulated time, only the host's, and in
    // lockstep (docs/time.md) how far it got before it was taken off would vary from run to
    // run. Unless the user chose a wait policy.
    if (plan_.options.cpu_model == CpuModel::Zero && !find_value(env, "GOMP_SPINCOUNT") &&
        !find_value(env, "OMP_WAIT_POLICY"))
        env.push_back("GOMP_SPINCOUNT=0");
    return env;
}

pid_t Supervisor::spawn(const std::vector<std::string>& args, CStrings& envp, pid_t pgid, bool null_stdin,
                        int& exec_errno)
{
    exec_errno = 0;
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0) {
        exec_errno = errno;
        return -1;
    }
    std::vector<std::string> sh_args = {"/bin/sh", plan_.program};
    sh_args.insert(sh_args.end(), args.begin() + 1, args.end());
    CStrings argv(args);
    CStrings sh_argv(sh_args);

    pid_t pid = ::fork();
    if (pid < 0) {
        exec_errno = errno;
        ::close(report[0]);
        ::close(report[1]);
        return -1;
    }
    if (pid == 0) {
        ::setpgid(0, pgid);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != self_) ::_exit(127);
        restore_signals_in_child();
        if (null_stdin) ::dup2(null_fd_, STDIN_FILENO);
        ::execve(plan_.program.c_str(), argv.get(), envp.get());
        if (errno == ENOEXEC) ::execve("/bin/sh", sh_argv.get(), envp.get());  // like execvp
        int error = errno;
        ssize_t ignored = ::write(report[1], &error, sizeof error);
        (void)ignored;
        ::_exit(127);
    }
    ::setpgid(pid, pgid == 0 ? pid : pgid);
    ::close(report[1]);
    int error = 0;
    ssize_t got;
    do {
        got = ::read(report[0], &error, sizeof error);
    } while (got < 0 && errno == EINTR);
    ::close(report[0]);
    if (got == sizeof error) {
        int wstatus;
        ::waitpid(pid, &wstatus, 0);
        exec_errno = error;
        return -1;
    }
    return pid;
}

int Supervisor::spawn_command()
{
    const Options& o = plan_.options;
    std::vector<std::string> base = child_environment();
    // Children run in their own process group, which is not the terminal's foreground
    // group: reading the terminal would stop them (SIGTTIN) and hang the run.
    bool terminal_stdin = ::isatty(STDIN_FILENO) == 1;
    int count = o.spawn_mode() ? *o.np : 1;
    children_.reserve(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
        std::vector<std::string> env = base;
        if (o.spawn_mode()) {
            env.push_back(fmt::format("S4BXI_RANK={}", i));
            env.push_back(fmt::format("S4BXI_SIZE={}", count));
        }
        CStrings envp(std::move(env));
        int exec_errno = 0;
        pid_t pgid = command_pgid_ > 0 ? command_pgid_ : 0;
        pid_t pid = spawn(o.command, envp, pgid, terminal_stdin || i > 0, exec_errno);
        if (pid < 0) {
            log::error("cannot execute '{}': {}{}", o.command.front(), std::strerror(exec_errno),
                       exec_errno == ENOENT ? " (its interpreter or dynamic loader is missing)" : "");
            launcher_error_ = fmt::format("cannot execute '{}'", o.command.front());
            return kExitUsage;
        }
        if (command_pgid_ < 0) command_pgid_ = pid;
        children_.push_back(Child{pid, o.spawn_mode() ? i : -1, true, 0});
        ++children_alive_;
        if (o.spawn_mode()) log::debug("rank {} started (pid {})", i, pid);
        else log::debug("command started (pid {})", pid);
    }
    return 0;
}

void Supervisor::stop_command()
{
    stopping_command_ = true;
    if (command_pgid_ > 0 && children_alive_ > 0) ::kill(-command_pgid_, SIGKILL);
    for (pid_t pid : descendants_of(self_))
        if (pid != server_pid_) ::kill(pid, SIGKILL);
}

void Supervisor::drain_signals()
{
    signalfd_siginfo info;
    while (true) {
        ssize_t got = ::read(signal_fd_, &info, sizeof info);
        if (got != sizeof info) break;
        int signal = static_cast<int>(info.ssi_signo);
        if (signal == SIGCHLD) reap_children();
        else on_interrupt(signal);
    }
    reap_children();  // SIGCHLD coalesces: always look
}

void Supervisor::reap_children()
{
    int wstatus = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &wstatus, WNOHANG)) > 0) on_exit(pid, wstatus);
}

void Supervisor::on_exit(pid_t pid, int wstatus)
{
    const Options& o = plan_.options;
    if (pid == server_pid_) {
        server_alive_ = false;
        server_wstatus_ = wstatus;
        server_deadline_.reset();
        if (WIFSIGNALED(wstatus) && !server_signaled_by_us_)
            log::error("the simulation server (pid {}) {}", pid, describe_status(wstatus));
        else
            log::debug("simulation server (pid {}) {}", pid, describe_status(wstatus));
        if (decode_status(wstatus) == kServerExitRankAbort) {
            // The server's one-line diagnosis names the rank; its status is the run's.
            std::string read_error;
            if (auto summary = read_summary(summary_path_, read_error); summary && summary->contains("abort_status"))
                abort_status_ = (*summary)["abort_status"].get<int>();
            if (children_alive_ > 0 && !stopping_command_) stop_command();
            return;
        }
        if (children_alive_ > 0 && !stopping_command_) {
            if (decode_status(wstatus) != 0) {
                // It has printed its diagnosis; without it the command cannot go on.
                if (first_rank_failure_) {
                    log::info("the simulation server {}; stopping the remaining ranks", describe_status(wstatus));
                } else if (!timed_out_ && !interrupted_ && !o.spawn_mode() &&
                           decode_status(wstatus) == kServerExitRankCrash) {
                    // A rank died: the process manager stops the others (MPI_Abort, a
                    // failed rank) and exits with the status that says why.
                    log::info("the simulation server reported a rank's end; waiting up to {} s for the command to "
                              "end",
                              kRankFailureGrace);
                    server_failed_during_run_ = true;
                    command_grace_ = after(kRankFailureGrace);
                    grace_reason_ = GraceReason::RankFailed;
                    return;
                } else if (!timed_out_ && !interrupted_) {
                    log::error("the simulation ended (the server {}) while the {} still running; stopping {}",
                               describe_status(wstatus), o.spawn_mode() ? "ranks were" : "command was",
                               o.spawn_mode() ? "them" : "it");
                    server_failed_during_run_ = true;
                }
                stop_command();
            } else if (!command_grace_) {
                // Normal end: ranks told the server they finished and are now exiting.
                command_grace_ = after(kCommandGrace);
                grace_reason_ = GraceReason::ServerEnded;
            }
        }
        return;
    }
    auto child = std::find_if(children_.begin(), children_.end(), [&](const Child& c) { return c.pid == pid; });
    if (child == children_.end()) {
        log::debug("reaped process {} ({})", pid, describe_status(wstatus));
        return;
    }
    child->alive = false;
    child->wstatus = wstatus;
    --children_alive_;
    if (!stopping_command_ && !interrupted_) {
        if (o.spawn_mode()) {
            if (WIFSIGNALED(wstatus)) {
                log::error("rank {} (pid {}) killed by {}{}", child->rank, pid, signal_name(WTERMSIG(wstatus)),
                           WCOREDUMP(wstatus) ? " (core dumped)" : "");
                if (!first_rank_failure_) first_rank_failure_ = decode_status(wstatus);
                // The server notices the death by itself; give it time to say so.
                if (server_alive_ && server_stage_ == ServerStage::Running) {
                    server_stage_ = ServerStage::WaitingExit;
                    server_grace_ = kServerExitGrace;
                    server_deadline_ = after(server_grace_);
                }
            } else if (decode_status(wstatus) != 0) {
                log::warning("rank {} (pid {}) exited with status {}", child->rank, pid, decode_status(wstatus));
                if (!first_rank_failure_) first_rank_failure_ = decode_status(wstatus);
            } else {
                log::debug("rank {} (pid {}) exited with status 0", child->rank, pid);
            }
        } else if (WIFSIGNALED(wstatus)) {
            log::error("the command (pid {}) {}", pid, describe_status(wstatus));
        } else {
            log::debug("the command (pid {}) {}", pid, describe_status(wstatus));
        }
    }
    if (children_alive_ == 0) {
        command_grace_.reset();
        if (server_alive_) {
            if (interrupted_ || timed_out_) {
                if (server_stage_ == ServerStage::Running || server_stage_ == ServerStage::WaitingExit) {
                    signal_server(SIGTERM);
                    server_stage_ = ServerStage::Terminated;
                    server_deadline_ = after(kServerTermGrace);
                }
            } else if (server_stage_ == ServerStage::Running) {
                // A failed command (mpirun refusing to start, a rank's error) may leave the
                // server waiting for ranks that will never register: a short grace, in
                // which a server whose ranks all ended finishes its report. Stopping it
                // at once made such runs end "interrupted by a signal" now and then.
                server_stage_ = ServerStage::WaitingExit;
                server_grace_ = command_failed() ? kFailedCommandServerGrace : kServerExitGrace;
                server_deadline_ = after(server_grace_);
            }
        }
    }
}

void Supervisor::on_interrupt(int signal)
{
    if (interrupted_) {
        log::error("{} received again: killing everything", signal_name(signal));
        stop_command();
        signal_server(SIGKILL);
        server_stage_ = ServerStage::Killed;
        server_deadline_.reset();
        return;
    }
    interrupted_ = signal;
    log::error("interrupted by {}: stopping the run", signal_name(signal));
    if (children_alive_ > 0) {
        if (command_pgid_ > 0) ::kill(-command_pgid_, signal);
        command_grace_ = after(kInterruptGrace);
        grace_reason_ = GraceReason::Interrupted;
    } else if (server_alive_) {
        signal_server(SIGTERM);
        server_stage_ = ServerStage::Terminated;
        server_deadline_ = after(kServerTermGrace);
    }
}

void Supervisor::check_deadlines()
{
    TimePoint now = Clock::now();
    if (wall_deadline_ && now >= *wall_deadline_) {
        wall_deadline_.reset();
        timed_out_ = true;
        launcher_error_ = fmt::format("wall-clock timeout of {} s exceeded", plan_.options.timeout);
        log::error("{}", launcher_error_);
        if (children_alive_ > 0) stop_command();
        if (server_alive_ && server_stage_ != ServerStage::Killed) {
            signal_server(SIGTERM);  // it writes its summary and exits
            server_stage_ = ServerStage::Terminated;
            server_deadline_ = after(kServerTermGrace);
        }
    }
    if (command_grace_ && now >= *command_grace_) {
        command_grace_.reset();
        if (children_alive_ > 0) {
            if (grace_reason_ == GraceReason::RankFailed) {
                log::error("the command was still running {} s after the simulation server reported a rank's end; "
                           "killing it",
                           kRankFailureGrace);
            } else if (grace_reason_ == GraceReason::ServerEnded) {
                launcher_error_ = fmt::format("the {} still running {} s after the simulation ended",
                                              plan_.options.spawn_mode() ? "ranks were" : "command was",
                                              kCommandGrace);
                log::error("{}; killing {}", launcher_error_, plan_.options.spawn_mode() ? "them" : "it");
                launcher_failure_ = 1;
            } else {
                log::warning("the {} did not stop within {} s; killing {}",
                             plan_.options.spawn_mode() ? "ranks" : "command", kInterruptGrace,
                             plan_.options.spawn_mode() ? "them" : "it");
            }
            stop_command();
        }
    }
    if (server_deadline_ && now >= *server_deadline_) {
        server_deadline_.reset();
        if (server_alive_ && server_stage_ == ServerStage::WaitingExit) {
            log::warning("the simulation server did not exit within {} s; sending it SIGTERM", server_grace_);
            signal_server(SIGTERM);
            server_stage_ = ServerStage::Terminated;
            server_deadline_ = after(kServerTermGrace);
        } else if (server_alive_ && server_stage_ == ServerStage::Terminated) {
            log::error("the simulation server did not exit {} s after SIGTERM; killing it", kServerTermGrace);
            signal_server(SIGKILL);
            server_stage_ = ServerStage::Killed;
        }
    }
}

std::optional<TimePoint> Supervisor::next_deadline() const
{
    std::optional<TimePoint> next;
    for (const auto& deadline : {wall_deadline_, command_grace_, server_deadline_})
        if (deadline && (!next || *deadline < *next)) next = deadline;
    return next;
}

void Supervisor::wait_for_events(std::optional<TimePoint> deadline)
{
    int timeout_ms = -1;
    if (deadline) {
        auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now()).count();
        timeout_ms = static_cast<int>(std::clamp<long long>(remaining + 1, 0, 60'000));
    }
    pollfd fd{signal_fd_, POLLIN, 0};
    int n = ::poll(&fd, 1, timeout_ms);
    if (n > 0) drain_signals();
}

void Supervisor::supervise()
{
    while (server_alive_ || children_alive_ > 0) {
        check_deadlines();
        if (!server_alive_ && children_alive_ == 0) break;
        wait_for_events(next_deadline());
    }
}

void Supervisor::kill_everything_left()
{
    // With PR_SET_CHILD_SUBREAPER every orphaned descendant is re-parented to us: once
    // waitpid() says we have no child at all, no descendant is left.
    stopping_command_ = true;
    TimePoint limit = after(10);
    bool warned = false;
    while (true) {
        int wstatus;
        pid_t pid;
        while ((pid = ::waitpid(-1, &wstatus, WNOHANG)) > 0) on_exit(pid, wstatus);
        if (pid < 0 && errno == ECHILD) break;
        std::vector<pid_t> left = descendants_of(self_);
        if (!left.empty() && !warned) {
            log::debug("killing {} leftover process(es)", left.size());
            warned = true;
        }
        for (pid_t p : left) ::kill(p, SIGKILL);
        if (Clock::now() >= limit) {
            log::error("some processes could not be reaped: {}", fmt::join(left, " "));
            break;
        }
        pollfd fd{signal_fd_, POLLIN, 0};
        ::poll(&fd, 1, 50);
        signalfd_siginfo info;
        while (::read(signal_fd_, &info, sizeof info) == sizeof info) {
        }
    }
}

bool Supervisor::command_failed() const
{
    if (first_rank_failure_) return true;
    return !plan_.options.spawn_mode() && !children_.empty() && !children_.front().alive &&
           decode_status(children_.front().wstatus) != 0;
}

int Supervisor::exit_status() const
{
    if (timed_out_) return kExitTimeout;
    if (interrupted_) return 128 + interrupted_;
    if (abort_status_) return *abort_status_;
    if (first_rank_failure_) return *first_rank_failure_;
    int server = server_pid_ > 0 ? decode_status(server_wstatus_) : 0;
    int command = 0;
    if (!plan_.options.spawn_mode() && !children_.empty()) command = decode_status(children_.front().wstatus);
    // After a rank's death, the command's own failure says why (MPI_Abort's code), unless
    // it had to be killed.
    if (grace_reason_ == GraceReason::RankFailed && command != 0 && !stopping_command_) return command;
    if (server_failed_during_run_) return server != 0 ? server : 1;
    if (launcher_failure_) return launcher_failure_;
    if (command != 0) return command;
    return server;
}

void Supervisor::report_summary(int status)
{
    double wall_time = seconds_since(start_);
    std::string read_error;
    std::optional<nlohmann::json> server = read_summary(summary_path_, read_error);
    if (!read_error.empty()) log::warning("{}", read_error);
    // Which model charged the MPI library's code, and with what costs (docs/time.md).
    if (server && server->is_object() && plan_.options.cpu_model == CpuModel::Measured)
        (*server)[key::mpi_costs] = {{key::model, plan_.mpi_cost_table.empty() ? "measured" : "calibrated"},
                                  {key::costs, plan_.mpi_cost_table},
                                  {key::source, plan_.mpi_cost_source}};
    if (!plan_.options.quiet) log::raw(format_summary(server ? &*server : nullptr, wall_time, status));
    if (plan_.options.summary_file) {
        nlohmann::json out = launcher_summary(server ? &*server : nullptr, wall_time, status, launcher_error_);
        std::ofstream file(*plan_.options.summary_file, std::ios::trunc);
        file << out.dump(2) << '\n';
        file.close();
        if (!file) log::error("cannot write the summary file {}", *plan_.options.summary_file);
    }
}

int Supervisor::run()
{
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
        log::error("cannot become a child subreaper: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    if (!setup_signals()) {
        log::error("cannot set up signal handling: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    null_fd_ = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd_ < 0) {
        log::error("cannot open /dev/null: {}", std::strerror(errno));
        return kExitLauncherFailure;
    }
    if (plan_.options.timeout > 0) wall_deadline_ = after(plan_.options.timeout);
    if (!make_run_dir()) {
        log::error("cannot create a private run directory (tried $XDG_RUNTIME_DIR, $TMPDIR and /tmp)");
        return kExitLauncherFailure;
    }
    if (!plan_.options.listen.empty() && (secret_ = draw_secret()).empty()) {
        log::error("cannot draw the run's secret for --listen: {}", std::strerror(errno));
        remove_run_dir();
        return kExitLauncherFailure;
    }

    int status = 0;
    bool ready = false;
    if (!start_server()) {
        status = kExitLauncherFailure;
    } else if ((status = wait_server_ready()) == 0) {
        ready = true;
        status = spawn_command();
        if (status != 0) {
            // Could not start everything: stop what runs; there is no run to summarize.
            ready = false;
            stopping_command_ = true;
            stop_command();
            signal_server(SIGKILL);
        } else {
            supervise();
            status = exit_status();
        }
    }
    kill_everything_left();
    if (ready) report_summary(status);
    remove_run_dir();
    return status;
}

}  // namespace

int run(const RunPlan& plan, char** environment)
{
    Supervisor supervisor(plan, environment);
    return supervisor.run();
}

}  // namespace s4bxi::launcher
