// Start-up: decides whether this process is a rank, registers it with the server before
// main(), and installs what each layer of the library does at points of a request
// (channel/channel_hooks.hpp). The one place that includes every folder.
#include "startup/registration.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "channel/channel_client.hpp"
#include "channel/channel_hooks.hpp"
#include "crash/crash_handler.hpp"
#include "identity/program_kind.hpp"
#include "mpi/mpi_profile.hpp"
#include "outside/outside_episode.hpp"
#include "rank/clock_ledger.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/fd_passing.hpp"
#include "s4bxi/time_math.hpp"
#include "threads/lockstep.hpp"
#include "time/seccomp_filter.hpp"
#include "time/threads_clock.hpp"
#include "time/virtual_clock.hpp"

namespace s4bxi::interpose {
namespace {

// First of the usual rank variables that is set, or -1.
int env_int(const char* const* names)
{
    for (; *names; ++names) {
        const char* value = getenv(*names);
        if (value && *value) {
            char* end = nullptr;
            long parsed = strtol(value, &end, 10);
            if (end && *end == '\0' && parsed >= 0 && parsed < (1L << 30)) return static_cast<int>(parsed);
        }
    }
    return -1;
}

bool send_fd(int socket_fd, const void* data, size_t size, int fd)
{
    return wire::send_with_fds(socket_fd, data, size, &fd, fd >= 0 ? 1 : 0);
}

template <class T>
T* map_shared(int fd, size_t bytes = sizeof(T))
{
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return memory == MAP_FAILED ? nullptr : static_cast<T*>(memory);
}

void become_passive_in_child()
{
    // A forked copy of a rank is not a rank: it must neither talk on the parent's channel
    // nor hold the rank's socket open. Its exec'd programs see S4BXI_RANK_PID and stay
    // passive too.
    g_rank.active = false;
    if (g_rank.socket_fd >= 0) close(g_rank.socket_fd);
    g_rank.socket_fd = -1;
}

void finalize_at_exit(int status, void*)
{
    finish_rank(status);
}

// What the server needs to know of the program (OpenSHMEM: memory waits, threads in lockstep).
uint32_t program_flags()
{
    return program_is_openshmem() ? wire::kHelloOpenShmem : 0;
}

// Sends the Hello, receives the Welcome and maps the channel. Returns false if refused.
void attach(int fd, uint32_t flags)
{
    static const char* const size_names[] = {"S4BXI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                             nullptr};
    wire::Hello hello{wire::kVersion, g_rank.rank, env_int(size_names), g_rank.pid, g_rank.tid, flags};
    if (hello.world_size < 0) hello.world_size = 0;
    if (!send_fd(fd, &hello, sizeof hello, -1)) fatal("registration failed: cannot send");
    int fds[2];  // the Welcome and the two channel fds (slot, doorbell)
    if (!wire::receive_with_fds(fd, &g_rank.welcome, sizeof g_rank.welcome, fds, 2) ||
        (g_rank.welcome.status == 0 && (fds[0] < 0 || fds[1] < 0)))
        fatal("registration failed: no answer from the server");
    if (g_rank.welcome.status != 0) {
        g_rank.welcome.reason[sizeof g_rank.welcome.reason - 1] = '\0';
        fatal(g_rank.welcome.reason);
    }
    g_rank.socket_fd = fd;
    // The mirror follows the slot, then the ring of MPI call records.
    g_rank.slot = map_shared<wire::Slot>(fds[0], wire::kChannelWithRecordsBytes);
    g_rank.doorbell = map_shared<wire::Doorbell>(fds[1]);
    if (!g_rank.slot || !g_rank.doorbell) fatal("cannot map the channel");
    // Under Yama's ptrace_scope=1 the server needs this to use process_vm_readv/writev on
    // us, and the other ranks' delivery threads to read payloads from us: the launcher
    // names its descendants, server and ranks alike.
    prctl(PR_SET_PTRACER, g_rank.welcome.ptracer_pid, 0, 0, 0);
}

// What the layers above the channel do at points of a request.
void install_hooks()
{
    ChannelHooks hooks;
    hooks.shield_request = lockstep::shield_request;
    hooks.unshield_request = lockstep::unshield_request;
    hooks.lockstep_reply = lockstep::learn;
    hooks.lockstep_wait_parked = lockstep::wait_parked;
    hooks.other_thread_replied = threads_clock::replied;
    hooks.absorb_outside = outside::absorb;
    hooks.outside_episode_under_way = outside::episode_under_way;
    install_channel_hooks(hooks);
}

// Starts this machine's agent, detached from the rank (a second agent started at the same
// time finds the socket taken and leaves), with only what it needs of the environment: not
// this library, nor the rank's variables.
void start_agent(const char* socket_path)
{
    const char* agent = getenv("S4BXI_AGENT");
    const char* server = getenv("S4BXI_SERVER_ADDRESS");
    const char* secret = getenv("S4BXI_RUN_SECRET");
    if (!agent || !*agent || !server || !*server || !secret) return;
    std::string secret_entry = std::string("S4BXI_RUN_SECRET=") + secret;
    const char* path = getenv("PATH");
    std::string path_entry = std::string("PATH=") + (path ? path : "/usr/bin:/bin");
    char* envp[] = {secret_entry.data(), path_entry.data(), nullptr};
    std::string log = socket_path;
    log = log.substr(0, log.rfind('/') + 1) + "agent.log";
    pid_t child = fork();
    if (child == 0) {
        setsid();
        if (fork() == 0) {
            int null_fd = open("/dev/null", O_RDWR);
            int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            dup2(null_fd, STDIN_FILENO);
            dup2(null_fd, STDOUT_FILENO);
            dup2(log_fd >= 0 ? log_fd : null_fd, STDERR_FILENO);
            execle(agent, agent, "--socket", socket_path, "--server", server, static_cast<char*>(nullptr), envp);
            _exit(127);
        }
        _exit(0);
    }
    if (child > 0) waitpid(child, nullptr, 0);
}

// Connects `fd` to this machine's agent, starting it first; waits for it to listen.
bool connect_through_agent(int fd, const sockaddr_un& address)
{
    if (!getenv("S4BXI_SERVER_ADDRESS")) return false;
    std::string folder = address.sun_path;
    folder = folder.substr(0, folder.rfind('/'));
    size_t at = 0;
    do {  // the run directory, for the agent's log before it runs
        at = folder.find('/', at + 1);
        mkdir(folder.substr(0, at).c_str(), 0700);
    } while (at != std::string::npos);
    start_agent(address.sun_path);
    for (int attempt = 0; attempt < 3000; ++attempt) {  // 30 s: the agent connects to the server first
        if (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) return true;
        if (errno != ENOENT && errno != ECONNREFUSED) return false;
        usleep(10000);
    }
    return false;
}

void register_rank()
{
    const char* socket_path = getenv("S4BXI_SOCKET");
    if (!socket_path || !*socket_path) return;
    static const char* const rank_names[] = {"S4BXI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                             "SLURM_PROCID", nullptr};
    int rank = env_int(rank_names);
    if (rank < 0) return;
    static const char* const launcher_names[] = {"S4BXI_RANK", nullptr};
    g_rank.launched = env_int(launcher_names) == rank;
    g_rank.rank = rank;
    g_rank.pid = getpid();
    g_rank.tid = static_cast<pid_t>(syscall(SYS_gettid));

    // A rank's registration is inherited by everything it starts. The same pid means the
    // rank exec'd a new image (its socket survived exec): re-attach. Another pid means a
    // child of a rank: it stays passive and lets go of the rank's socket.
    const char* rank_pid = getenv("S4BXI_RANK_PID");
    const char* rank_fd_text = getenv("S4BXI_RANK_FD");
    int inherited_fd = rank_fd_text ? atoi(rank_fd_text) : -1;
    if (rank_pid) {
        if (atoi(rank_pid) != g_rank.pid) {
            if (inherited_fd > 2) close(inherited_fd);
            return;
        }
        if (inherited_fd < 0) fatal("exec'd rank lost its registration socket");
        attach(inherited_fd, wire::kHelloReattach | program_flags());
        fcntl(inherited_fd, F_SETFD, 0);
    } else {
        // Not close-on-exec: the rank keeps its registration if it execs another program.
        int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        if (fd < 0) fatal("cannot create the registration socket");
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        if (strlen(socket_path) >= sizeof address.sun_path) fatal("S4BXI_SOCKET path is too long");
        strcpy(address.sun_path, socket_path);
        if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
            // No run directory on this machine: the server is on another one (--listen);
            // this machine's agent serves the run's socket here, started by its first rank.
            bool through_agent = errno == ENOENT && connect_through_agent(fd, address);
            // The server stops listening once the world it was given has registered.
            if (!through_agent && errno == ECONNREFUSED)
                fatal("not supported yet: a rank that starts after the run's ranks have all registered "
                      "(MPI_Comm_spawn, a second mpirun under the same s4bxi-launch)");
            if (!through_agent)
                fatal("cannot reach the simulation server (S4BXI_SOCKET); is this run under s4bxi-launch (with "
                      "--listen, for ranks on other machines than the server's)?");
        }
        attach(fd, program_flags());
        char text[32];
        snprintf(text, sizeof text, "%d", g_rank.pid);
        setenv("S4BXI_RANK_PID", text, 1);
        snprintf(text, sizeof text, "%d", fd);
        setenv("S4BXI_RANK_FD", text, 1);
    }
    pthread_atfork(nullptr, nullptr, become_passive_in_child);

    // An exec'd rank keeps its clock: the slot remembers the last reply.
    g_rank.wall_at_reply_ns = host_monotonic_ns();
    if (!rank_pid) {
        g_rank.slot->cpu_at_reply_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
        set_threads_clock_offset(
            timemath::threads_clock_offset(timemath::seconds_to_ns(virtual_now()), g_rank.wall_at_reply_ns));
    }
    g_rank.posted_head = g_rank.slot->posted_head.load(std::memory_order_relaxed);  // an exec'd rank's
    g_rank.ledger.replied(g_rank.slot->cpu_at_reply_ns.load(std::memory_order_relaxed));
    g_rank.ledger.published(g_rank.slot->threads_clock_offset_ns.load(std::memory_order_relaxed));
    install_hooks();
    g_rank.active = true;

    // The direct-syscall trap's listener goes to the server (an exec'd rank has one: it survives).
    int listener = rank_pid ? -1 : install_time_trap();
    int32_t kind = listener >= 0 ? 1 : 0;
    if (!send_fd(g_rank.socket_fd, &kind, sizeof kind, listener)) fatal("registration failed: cannot send the trap");
    if (listener >= 0) close(listener);
    install_crash_handler();
    on_exit(finalize_at_exit, nullptr);
}

__attribute__((constructor(101))) void s4bxi_rank_constructor()
{
    register_rank();
}

}  // namespace

void finish_rank(int status)
{
    // Not in a vfork'd child (same memory, other pid).
    if (!g_rank.active || getpid() != g_rank.pid) return;
    if (g_rank.in_call) {  // another thread's request (or the one a signal interrupted) holds the slot
        g_rank.slot->exit_status_plus_one.store(static_cast<uint32_t>(status & 0xff) + 1, std::memory_order_release);
        return;
    }
    mpi::write_totals();  // drained with the Finalize
    wire::FinalizeArgs args{status, 0, g_rank.library_charged_ns};
    call(wire::Op::Finalize, &args, sizeof args);
    g_rank.active = false;
}

}  // namespace s4bxi::interpose
