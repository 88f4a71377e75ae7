// Rank runtime: decides whether this process is a rank, registers it with the server
// before main(), and carries every request over the shared-memory channel.
#include "runtime.hpp"

#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "crash_handler.hpp"
#include "s4bxi/fd_passing.hpp"
#include "seccomp_filter.hpp"
#include "time_math.hpp"

namespace s4bxi::interpose {
namespace {

// Busy-wait briefly before sleeping on the futex: a reply often comes within
// microseconds, but ranks and server may share few cores, and a long spin steals the CPU
// from the very process being waited for (bench/run_benchmarks.py measures it).
constexpr int kSpins = 400;



struct RankState {
    bool active = false;
    int rank = -1;
    pid_t pid = 0;
    pid_t tid = 0;
    int socket_fd = -1;
    wire::Slot* slot = nullptr;
    wire::Doorbell* doorbell = nullptr;
    wire::Welcome welcome{};
    double wall_at_reply = 0.0;
    bool in_call = false;
    wire::Reply last_reply{};
};

RankState g_state;

[[noreturn]] void fatal(const char* what)
{
    char buffer[512];
    int n = snprintf(buffer, sizeof buffer, "s4bxi: rank %d: %s\n", g_state.rank, what);
    if (n > 0) (void)!write(STDERR_FILENO, buffer, static_cast<size_t>(n) < sizeof buffer ? n : sizeof buffer - 1);
    _exit(70);
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout)
{
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

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

// Receives the Welcome and the two channel fds (slot, doorbell).
bool receive_welcome(int socket_fd, wire::Welcome& welcome, int fds[2])
{
    if (!wire::receive_with_fds(socket_fd, &welcome, sizeof welcome, fds, 2)) return false;
    return welcome.status != 0 || (fds[0] >= 0 && fds[1] >= 0);
}

template <class T>
T* map_shared(int fd)
{
    void* memory = mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return memory == MAP_FAILED ? nullptr : static_cast<T*>(memory);
}

bool server_alive()
{
    pollfd pfd{g_state.socket_fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 0);
    if (ready <= 0) return true;
    if (pfd.revents & (POLLHUP | POLLERR)) return false;
    char byte;
    return recv(g_state.socket_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0;
}

void become_passive_in_child()
{
    // A forked copy of a rank is not a rank: it must neither talk on the parent's channel
    // nor hold the rank's socket open. Its exec'd programs see S4BXI_RANK_PID and stay
    // passive too.
    g_state.active = false;
    if (g_state.socket_fd >= 0) close(g_state.socket_fd);
    g_state.socket_fd = -1;
}

void finalize_at_exit(int status, void*)
{
    finish_rank(status);
}

// Sends the Hello, receives the Welcome and maps the channel. Returns false if refused.
void attach(int fd, uint32_t flags, const char* size_env_names_unused)
{
    (void)size_env_names_unused;
    static const char* const size_names[] = {"S4BXI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS",
                                             nullptr};
    wire::Hello hello{wire::kVersion, g_state.rank, env_int(size_names), g_state.pid, g_state.tid, flags};
    if (hello.world_size < 0) hello.world_size = 0;
    if (!send_fd(fd, &hello, sizeof hello, -1)) fatal("registration failed: cannot send");
    int fds[2];
    if (!receive_welcome(fd, g_state.welcome, fds)) fatal("registration failed: no answer from the server");
    if (g_state.welcome.status != 0) {
        g_state.welcome.reason[sizeof g_state.welcome.reason - 1] = '\0';
        fatal(g_state.welcome.reason);
    }
    g_state.socket_fd = fd;
    g_state.slot = map_shared<wire::Slot>(fds[0]);
    g_state.doorbell = map_shared<wire::Doorbell>(fds[1]);
    if (!g_state.slot || !g_state.doorbell) fatal("cannot map the channel");
    // Under Yama ptrace_scope=1 the server needs this to use process_vm_readv/writev on us.
    prctl(PR_SET_PTRACER, g_state.welcome.server_pid, 0, 0, 0);
}

void register_rank()
{
    const char* socket_path = getenv("S4BXI_SOCKET");
    if (!socket_path || !*socket_path) return;
    static const char* const rank_names[] = {"S4BXI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                             "SLURM_PROCID", nullptr};
    int rank = env_int(rank_names);
    if (rank < 0) return;
    g_state.rank = rank;
    g_state.pid = getpid();
    g_state.tid = static_cast<pid_t>(syscall(SYS_gettid));

    // A rank's registration is inherited by everything it starts. The same pid means the
    // rank exec'd a new image (its socket survived exec): re-attach. Another pid means a
    // child of a rank: it stays passive and lets go of the rank's socket.
    const char* rank_pid = getenv("S4BXI_RANK_PID");
    const char* rank_fd_text = getenv("S4BXI_RANK_FD");
    int inherited_fd = rank_fd_text ? atoi(rank_fd_text) : -1;
    if (rank_pid) {
        if (atoi(rank_pid) != g_state.pid) {
            if (inherited_fd > 2) close(inherited_fd);
            return;
        }
        if (inherited_fd < 0) fatal("exec'd rank lost its registration socket");
        attach(inherited_fd, wire::kHelloReattach, nullptr);
        fcntl(inherited_fd, F_SETFD, 0);
    } else {
        // Not close-on-exec: the rank keeps its registration if it execs another program.
        int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        if (fd < 0) fatal("cannot create the registration socket");
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        if (strlen(socket_path) >= sizeof address.sun_path) fatal("S4BXI_SOCKET path is too long");
        strcpy(address.sun_path, socket_path);
        if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
            fatal("cannot reach the simulation server (S4BXI_SOCKET); is this run under s4bxi-launch?");
        attach(fd, 0, nullptr);
        char text[32];
        snprintf(text, sizeof text, "%d", g_state.pid);
        setenv("S4BXI_RANK_PID", text, 1);
        snprintf(text, sizeof text, "%d", fd);
        setenv("S4BXI_RANK_FD", text, 1);
    }
    pthread_atfork(nullptr, nullptr, become_passive_in_child);

    // An exec'd rank keeps its clock: the slot remembers the last reply.
    g_state.wall_at_reply = real_monotonic();
    if (!rank_pid) {
        g_state.slot->cpu_at_reply_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
        set_threads_clock_offset(timemath::threads_clock_offset(
            timemath::seconds_to_ns(virtual_now()), timemath::seconds_to_ns(g_state.wall_at_reply)));
    }
    g_state.active = true;

    // The listener fd of the direct-syscall trap goes to the server, which serves it. A
    // filter survives exec, so an exec'd rank already has one.
    int listener = rank_pid ? -1 : install_time_trap();
    int32_t kind = listener >= 0 ? 1 : 0;
    if (!send_fd(g_state.socket_fd, &kind, sizeof kind, listener)) fatal("registration failed: cannot send the trap");
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
    // Not in a vfork'd child (same memory, other pid) nor in the middle of a request.
    if (!g_state.active || getpid() != g_state.pid || g_state.in_call) return;
    wire::FinalizeArgs args{status, 0};
    call(wire::Op::Finalize, &args, sizeof args);
    g_state.active = false;
}

bool is_rank()
{
    return g_state.active;
}

bool in_call()
{
    return g_state.in_call;
}

bool on_simulated_thread()
{
    if (!g_state.active) return false;
    static thread_local pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
    return tid == g_state.tid;
}

uint64_t thread_cpu_ns()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double real_monotonic()
{
    // libc's own clock_gettime reads the vDSO: no syscall, so our seccomp trap (which
    // answers direct clock syscalls with virtual time) never sees it.
    using ClockGettime = int (*)(clockid_t, timespec*);
    static ClockGettime libc_clock_gettime = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    timespec ts{};
    libc_clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double virtual_now()
{
    // Wall time that passed without CPU time means the rank was blocked outside the
    // simulation (a pipe, a futex, a PMIx fence): it did not hold simulated time, so its
    // clock must catch up with the simulation's before being read.
    constexpr double kBlockedOutside = 0.01;  // wall seconds not spent on the CPU
    double host_now = -1.0;  // when read here, and no reply since (call() publishes its own offset)
    if (!g_state.in_call && g_state.active) {
        host_now = real_monotonic();
        double wall = host_now - g_state.wall_at_reply;
        double cpu = static_cast<double>(thread_cpu_ns() - g_state.slot->cpu_at_reply_ns.load()) * 1e-9;
        if (wall - cpu > kBlockedOutside) {
            simulated_yield();
            host_now = -1.0;
        }
    }
    // The slot, not a private copy, holds the last reply: the server also answers trapped
    // sleeps on the rank's behalf and updates it.
    uint64_t bits = g_state.slot->sim_time_at_reply_bits.load(std::memory_order_acquire);
    double sim_time;
    memcpy(&sim_time, &bits, sizeof sim_time);
    double now = sim_time;
    if (g_state.welcome.cpu_model != static_cast<uint32_t>(wire::CpuModel::Zero)) {
        uint64_t cpu = thread_cpu_ns() - g_state.slot->cpu_at_reply_ns.load(std::memory_order_acquire);
        now = sim_time + static_cast<double>(cpu) * 1e-9 * g_state.welcome.cpu_factor;
    }
    // The rank's other threads continue from this reading (docs/time.md).
    if (host_now >= 0.0 && on_simulated_thread())
        set_threads_clock_offset(
            timemath::threads_clock_offset(timemath::seconds_to_ns(now), timemath::seconds_to_ns(host_now)));
    return now;
}

int64_t threads_clock_offset()
{
    return g_state.slot ? g_state.slot->threads_clock_offset_ns.load(std::memory_order_acquire) : 0;
}

void set_threads_clock_offset(int64_t offset_ns)
{
    if (g_state.slot) g_state.slot->threads_clock_offset_ns.store(offset_ns, std::memory_order_release);
}

double virtual_epoch()
{
    return g_state.welcome.epoch;
}

const char* node_name()
{
    return g_state.welcome.node_name;
}

int rank_id()
{
    return g_state.rank;
}

void simulated_sleep(double seconds)
{
    wire::SleepArgs args{seconds};
    call(wire::Op::Sleep, &args, sizeof args);
}

void simulated_yield()
{
    call(wire::Op::Yield, nullptr, 0);
}

const wire::Reply& call(wire::Op op, const void* args, uint32_t args_size)
{
    if (!g_state.active) fatal("internal error: request from a process that is not a registered rank");
    if (args_size > wire::kArgBytes) fatal("internal error: request arguments too large");
    g_state.in_call = true;
    wire::Slot& slot = *g_state.slot;
    wire::Request& request = slot.request;
    request.op = static_cast<uint32_t>(op);
    request.seq = request.seq + 1;  // the server's trap also posts on this slot
    request.cpu_ns = thread_cpu_ns() - slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    if (args_size) memcpy(request.args, args, args_size);
    slot.state.store(static_cast<uint32_t>(wire::SlotState::Posted), std::memory_order_release);
    g_state.doorbell->count.fetch_add(1, std::memory_order_acq_rel);
    if (g_state.doorbell->server_waiting.load(std::memory_order_acquire))
        futex(&g_state.doorbell->count, FUTEX_WAKE, 1, nullptr);

    const uint32_t replied = static_cast<uint32_t>(wire::SlotState::Replied);
    for (int spin = 0; spin < kSpins && slot.state.load(std::memory_order_acquire) != replied; ++spin)
        __builtin_ia32_pause();
    while (slot.state.load(std::memory_order_acquire) != replied) {
        timespec timeout{1, 0};
        futex(&slot.state, FUTEX_WAIT, static_cast<uint32_t>(wire::SlotState::Posted), &timeout);
        if (slot.state.load(std::memory_order_acquire) != replied && !server_alive())
            fatal("the simulation server is gone; stopping");
    }
    g_state.last_reply = slot.reply;
    if (g_state.last_reply.seq != request.seq) fatal("internal error: reply out of sequence");
    g_state.wall_at_reply = real_monotonic();
    uint64_t bits;
    memcpy(&bits, &g_state.last_reply.sim_time, sizeof bits);
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_relaxed);
    slot.cpu_at_reply_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
    set_threads_clock_offset(timemath::threads_clock_offset(timemath::seconds_to_ns(g_state.last_reply.sim_time),
                                                            timemath::seconds_to_ns(g_state.wall_at_reply)));
    slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
    g_state.in_call = false;
    return g_state.last_reply;
}

}  // namespace s4bxi::interpose

// Programs that end with _exit (dash, forked helpers, some runtimes) skip on_exit
// handlers: the rank must still tell the server it finished, with its status.
extern "C" __attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    s4bxi::interpose::finish_rank(status);
    syscall(SYS_exit_group, status);
    __builtin_unreachable();
}

extern "C" __attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    _exit(status);
}
