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

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include <portals4.h>

#include "crash/crash_handler.hpp"
#include "delivery/delivery_thread.hpp"
#include "identity/program_kind.hpp"
#include "mpi/mpi_profile.hpp"
#include "outside/outside_episode.hpp"
#include "s4bxi/brief_wait.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/fd_passing.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/slot_futex.hpp"
#include "s4bxi/time_math.hpp"
#include "ticket_lock.hpp"
#include "time/clock_spin.hpp"
#include "time/cpu_accounting.hpp"
#include "threads/lockstep.hpp"
#include "time/seccomp_filter.hpp"
#include "time/threads_clock.hpp"

namespace s4bxi::interpose {
namespace {

// Wall time that passed without CPU time since the last reply means the rank was blocked
// outside the simulation (a pipe, a futex, a PMIx fence): see virtual_now().
constexpr int64_t kBlockedOutsideNs = 10'000'000;

struct RankState {
    bool active = false;
    bool launched = false;  // rank from S4BXI_RANK (spawn mode)
    int rank = -1;
    pid_t pid = 0;
    pid_t tid = 0;
    int socket_fd = -1;
    wire::Slot* slot = nullptr;
    wire::Doorbell* doorbell = nullptr;
    wire::Welcome welcome{};
    int64_t wall_at_reply_ns = 0;  // host CLOCK_MONOTONIC at the last reply
    std::atomic<bool> in_call{false};  // some thread's request holds the slot
    // What of the simulated thread's CPU time is the interposer's (cpu_accounting.hpp).
    cpuacct::Ledger ledger{};
    ClockSpin clock_spin{};  // zero CPU model: readings that wait for the clock to move
    bool in_reading = false;  // virtual_now() is updating the ledger
    uint64_t library_charged_ns = 0;  // the MPI library model's charges (enter_library())
    uint32_t posted_head = 0;  // commands the simulated thread posted (post()), as in the slot
    // The mirror's reply count at the simulated thread's last reply: a point of the run
    // that is the same from one run to the next, unlike a catch-up (a full ring's is not).
    // Written by the simulated thread, read by any thread that appends.
    std::atomic<uint64_t> replies_known{0};
};

RankState g_state;
// Calls of call() by this thread, answered locally or not.
thread_local __attribute__((tls_model("initial-exec"))) uint64_t t_requests = 0;
// Requests this thread posted on the slot (the ones answered locally left out): what a
// clock spin takes for the program doing something (clock_spin.hpp).
thread_local __attribute__((tls_model("initial-exec"))) uint32_t t_posted = 0;
// This thread's request holds the slot (g_state.in_call: some thread's does).
thread_local __attribute__((tls_model("initial-exec"))) bool t_in_call = false;
// Set while this thread holds a ticket that is not served yet: a signal handler that
// interrupted it there and made a Portals call would wait behind its own ticket for ever.
thread_local volatile bool t_waiting_for_turn = false;
// Set while this thread is in post(): a signal handler's call then goes to the server.
thread_local volatile bool t_in_post = false;

void catch_up();
pid_t current_tid();

// A rank's threads take turns at its slot and mirror (ticket_lock.hpp). A thread blocked in
// a Portals wait keeps its turn until the server parks the wait.
TicketLock g_turn;

using ClockGettime = int (*)(clockid_t, timespec*);
std::atomic<ClockGettime> g_libc_clock_gettime{nullptr};  // libc's, for host_monotonic_ns()

[[noreturn]] void fatal(const char* what)
{
    char buffer[512];
    int n = snprintf(buffer, sizeof buffer, "s4bxi: rank %d: %s\n", g_state.rank, what);
    if (n > 0) (void)!write(STDERR_FILENO, buffer, static_cast<size_t>(n) < sizeof buffer ? n : sizeof buffer - 1);
    _exit(70);
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

template <class T>
T* map_shared(int fd, size_t bytes = sizeof(T))
{
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
    wire::Hello hello{wire::kVersion, g_state.rank, env_int(size_names), g_state.pid, g_state.tid, flags};
    if (hello.world_size < 0) hello.world_size = 0;
    if (!send_fd(fd, &hello, sizeof hello, -1)) fatal("registration failed: cannot send");
    int fds[2];  // the Welcome and the two channel fds (slot, doorbell)
    if (!wire::receive_with_fds(fd, &g_state.welcome, sizeof g_state.welcome, fds, 2) ||
        (g_state.welcome.status == 0 && (fds[0] < 0 || fds[1] < 0)))
        fatal("registration failed: no answer from the server");
    if (g_state.welcome.status != 0) {
        g_state.welcome.reason[sizeof g_state.welcome.reason - 1] = '\0';
        fatal(g_state.welcome.reason);
    }
    g_state.socket_fd = fd;
    // The mirror follows the slot, then the ring of MPI call records.
    g_state.slot = map_shared<wire::Slot>(fds[0], wire::kChannelWithRecordsBytes);
    g_state.doorbell = map_shared<wire::Doorbell>(fds[1]);
    if (!g_state.slot || !g_state.doorbell) fatal("cannot map the channel");
    // Under Yama's ptrace_scope=1 the server needs this to use process_vm_readv/writev on
    // us, and the other ranks' delivery threads to read payloads from us: the launcher
    // names its descendants, server and ranks alike.
    prctl(PR_SET_PTRACER, g_state.welcome.ptracer_pid, 0, 0, 0);
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
    g_state.launched = env_int(launcher_names) == rank;
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
            // The server stops listening once the world it was given has registered.
            if (errno == ECONNREFUSED)
                fatal("not supported yet: a rank that starts after the run's ranks have all registered "
                      "(MPI_Comm_spawn, a second mpirun under the same s4bxi-launch)");
            fatal("cannot reach the simulation server (S4BXI_SOCKET); is this run under s4bxi-launch?");
        }
        attach(fd, program_flags());
        char text[32];
        snprintf(text, sizeof text, "%d", g_state.pid);
        setenv("S4BXI_RANK_PID", text, 1);
        snprintf(text, sizeof text, "%d", fd);
        setenv("S4BXI_RANK_FD", text, 1);
    }
    pthread_atfork(nullptr, nullptr, become_passive_in_child);

    // An exec'd rank keeps its clock: the slot remembers the last reply.
    g_state.wall_at_reply_ns = host_monotonic_ns();
    if (!rank_pid) {
        g_state.slot->cpu_at_reply_ns.store(thread_cpu_ns(), std::memory_order_relaxed);
        set_threads_clock_offset(
            timemath::threads_clock_offset(timemath::seconds_to_ns(virtual_now()), g_state.wall_at_reply_ns));
    }
    g_state.posted_head = g_state.slot->posted_head.load(std::memory_order_relaxed);  // an exec'd rank's
    g_state.ledger.replied(g_state.slot->cpu_at_reply_ns.load(std::memory_order_relaxed));
    g_state.ledger.published(g_state.slot->threads_clock_offset_ns.load(std::memory_order_relaxed));
    g_state.active = true;

    // The direct-syscall trap's listener goes to the server (an exec'd rank has one: it survives).
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

pid_t current_tid()
{
    // Initial-exec TLS and no guard: this is on the path of every request and clock reading.
    static thread_local __attribute__((tls_model("initial-exec"))) pid_t tid = 0;
    if (tid == 0) tid = static_cast<pid_t>(syscall(SYS_gettid));
    return tid;
}

}  // namespace

void finish_rank(int status)
{
    // Not in a vfork'd child (same memory, other pid).
    if (!g_state.active || getpid() != g_state.pid) return;
    if (g_state.in_call) {  // another thread's request (or the one a signal interrupted) holds the slot
        g_state.slot->exit_status_plus_one.store(static_cast<uint32_t>(status & 0xff) + 1, std::memory_order_release);
        return;
    }
    mpi::write_totals();  // drained with the Finalize
    wire::FinalizeArgs args{status, 0, g_state.library_charged_ns};
    call(wire::Op::Finalize, &args, sizeof args);
    g_state.active = false;
}

void leave_run()
{
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

bool zero_cpu_model()
{
    return g_state.welcome.cpu_model == static_cast<uint32_t>(wire::CpuModel::Zero);
}

bool threads_lockstep()
{
    return g_state.welcome.threads_lockstep != 0;
}

uint64_t requests_made()
{
    return t_requests;
}

wire::Mirror* readable_mirror()
{
    if (!g_state.active || g_state.in_call || g_state.in_reading || !on_simulated_thread() || lockstep::active())
        return nullptr;  // in lockstep, every call is a request: the order of the threads' calls is the run's
    if (!g_turn.try_take(current_tid())) return nullptr;  // another thread's request: ask the server after it
    catch_up();  // what the rank reads is as of its last reply, posted commands included
    return &wire::mirror_of(*g_state.slot);
}

void release_mirror()
{
    g_turn.give();
}

wire::Mirror* entry_mirror(uint64_t& replies)
{
    if (!g_state.active) return nullptr;
    replies = zero_cpu_model() ? g_state.replies_known.load(std::memory_order_relaxed) : UINT64_MAX;
    return &wire::mirror_of(*g_state.slot);
}

bool on_simulated_thread()
{
    return g_state.active && current_tid() == g_state.tid;
}

int simulated_thread_id()
{
    return g_state.active ? g_state.tid : 0;
}

uint64_t thread_cpu_ns()
{
    timespec ts{};
    syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

double real_monotonic()
{
    return static_cast<double>(host_monotonic_ns()) * 1e-9;
}

int64_t host_monotonic_ns()
{
    // libc's own clock_gettime reads the vDSO: no syscall, which the seccomp trap would answer
    // with virtual time. Resolved at registration, before any reading.
    ClockGettime libc_clock_gettime = g_libc_clock_gettime.load(std::memory_order_relaxed);
    if (!libc_clock_gettime) {
        libc_clock_gettime = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
        g_libc_clock_gettime.store(libc_clock_gettime, std::memory_order_relaxed);
    }
    timespec ts{};
    libc_clock_gettime(CLOCK_MONOTONIC, &ts);
    return timemath::timespec_to_ns(ts);
}

namespace {

double sim_time_at_reply()
{
    // The slot, not a private copy, holds the last reply: the server also answers trapped
    // sleeps on the rank's behalf and updates it.
    return g_state.slot->sim_time_at_reply();
}

double clock_at(double sim_time, uint64_t cpu_ns, uint64_t base_ns)
{
    return timemath::virtual_clock(sim_time, base_ns, cpu_ns, g_state.slot->cpu_frozen_ns.load(std::memory_order_acquire),
                                   g_state.welcome.cpu_factor, zero_cpu_model());
}

// A reading of the simulated thread's CPU clock (`cpu_ns`, taken after the host's
// CLOCK_MONOTONIC showed `wall_entry_ns`): the interposer's own CPU time since the
// previous reading leaves the simulated compute, the base of the clock (the slot's
// cpu_at_reply_ns) moving forward by as much (cpu_accounting.hpp). Returns the base.
uint64_t account_reading(uint64_t cpu_ns, int64_t wall_entry_ns)
{
    wire::Slot& slot = *g_state.slot;
    uint64_t slot_base = slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    uint64_t base = g_state.ledger.reading(cpu_ns, wall_entry_ns, slot_base,
                                           slot.threads_clock_offset_ns.load(std::memory_order_relaxed),
                                           slot.cpu_frozen_ns.load(std::memory_order_acquire));
    if (base != slot_base) slot.cpu_at_reply_ns.store(base, std::memory_order_release);
    return base;
}

void publish_threads_clock_offset(int64_t offset_ns)
{
    g_state.slot->threads_clock_offset_ns.store(offset_ns, std::memory_order_release);
    g_state.ledger.published(offset_ns);
}

// A reading under the zero CPU model: the date of the last reply, unless the readings
// have become a clock spin (clock_spin.hpp), which sleeps first.
double zero_model_reading(int64_t wall_ns)
{
    double now = sim_time_at_reply();
    if (double sleep = g_state.clock_spin.reading(now, t_posted); sleep > 0) {
        simulated_sleep(sleep);
        g_state.clock_spin.slept(t_posted);
        now = sim_time_at_reply();
        wall_ns = host_monotonic_ns();
    }
    publish_threads_clock_offset(timemath::threads_clock_offset(timemath::seconds_to_ns(now), wall_ns));
    return now;
}

// Waits until the server has served every command the simulated thread posted (post()):
// the slot's clock and the mirror then stand as after the reply to the last of them, as
// they would have after a call that waited. The wait is the interposer's, like the wait
// for a reply: its wall time does not count as time blocked outside, nor its CPU time as
// compute.
void catch_up()
{
    wire::Slot& slot = *g_state.slot;
    auto caught_up = [&] { return slot.posted_served.load(std::memory_order_acquire) == g_state.posted_head; };
    if (caught_up()) return;
    const bool zero_model = zero_cpu_model();
    int64_t wall_before = host_monotonic_ns();
    uint64_t cpu_before = 0;
    if (!zero_model) {
        // A reading, as at a request: the interposer's own time since the application
        // last called in is left out (cpu_accounting.hpp), and the wait starts a new segment.
        cpu_before = thread_cpu_ns();
        account_reading(cpu_before, wall_before);
    }
    if (!brief_wait(caught_up, host_monotonic_ns, kRankYieldingFloorNs)) {
        while (true) {
            uint32_t served = slot.posted_served.load(std::memory_order_seq_cst);
            if (served == g_state.posted_head) break;
            slot.posted_sleepers.fetch_add(1, std::memory_order_seq_cst);
            timespec timeout{1, 0};
            futex(&slot.posted_served, FUTEX_WAIT, served, &timeout);
            slot.posted_sleepers.fetch_sub(1, std::memory_order_release);
            if (!caught_up() && !server_alive()) fatal("the simulation server is gone; stopping");
        }
    }
    g_state.wall_at_reply_ns += host_monotonic_ns() - wall_before;
    if (zero_model) return;
    uint64_t cpu_after = thread_cpu_ns();
    uint64_t waited = cpu_after - cpu_before;
    g_state.ledger.base_ns += waited;
    g_state.ledger.reply_cpu_ns += waited;
    g_state.ledger.reading_cpu_ns = cpu_after;
    slot.cpu_at_reply_ns.store(g_state.ledger.base_ns, std::memory_order_release);
    g_state.ledger.returned(host_monotonic_ns());
}

// The calling thread may catch up (catch_up()): the simulated thread, outside a request.
bool may_catch_up()
{
    return g_state.active && !t_in_call && !t_waiting_for_turn && !t_in_post && on_simulated_thread();
}

}  // namespace

double virtual_now()
{
    // Threads in lockstep hold simulated time while they run: the rank's last reply.
    if (lockstep::on_lockstep_thread()) return sim_time_at_reply();
    if (may_catch_up() && !g_state.in_reading) catch_up();
    // The wall stamp first: what runs after it is ours (cpu_accounting.hpp).
    int64_t wall_ns = host_monotonic_ns();
    // Within a request of this thread's (a signal handler), from a nested reading, or off
    // the simulated thread: the clock as it stands, no accounting. Another thread's request
    // leaves the simulated thread's clock to it: a progress thread that polls all the time
    // must not keep a busy-wait's readings from counting (clock_spin.hpp).
    if (!g_state.active || t_in_call || t_in_post || g_state.in_reading || !on_simulated_thread())
        return clock_at(sim_time_at_reply(), thread_cpu_ns(),
                        g_state.slot->cpu_at_reply_ns.load(std::memory_order_acquire));
    const bool zero_model = zero_cpu_model();
    // Wall time that passed without CPU time means the rank was blocked outside the
    // simulation (a pipe, a futex, a PMIx fence): it did not hold simulated time, so its
    // clock must catch up with the simulation's before being read. CPU time counts from
    // the reply, before any exclusion, or from the end of a sleep the server answered.
    // The zero CPU model reads the CPU clock only when that may be the case, given the CPU
    // time known to have passed since the reply (at the previous reading).
    wire::Slot& slot = *g_state.slot;
    int64_t wall_since_reply = wall_ns - g_state.wall_at_reply_ns;
    uint64_t slot_base = slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    if (zero_model &&
        wall_since_reply - static_cast<int64_t>(g_state.ledger.known_cpu_since_reply(slot_base)) <= kBlockedOutsideNs)
        return zero_model_reading(wall_ns);
    g_state.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    uint64_t reply_cpu = g_state.ledger.reply_reference(slot_base);
    int64_t cpu_since_reply = cpu_ns > reply_cpu ? static_cast<int64_t>(cpu_ns - reply_cpu) : 0;
    if (wall_since_reply - cpu_since_reply > kBlockedOutsideNs) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        g_state.in_reading = false;
        uint32_t posted = t_posted;
        simulated_yield();  // a reading of its own (call())
        // Not the program's call: it neither spends a free poll (mirror_reads.cpp) nor
        // ends a clock spin. Under the zero model a rank the machine merely descheduled
        // comes back to the date it left, and the run goes on as if it had not been away.
        --t_requests;
        t_posted = posted;
        if (!zero_model) return sim_time_at_reply();
        return zero_model_reading(host_monotonic_ns());
    }
    uint64_t base = account_reading(cpu_ns, wall_ns);
    double now = clock_at(sim_time_at_reply(), cpu_ns, base);
    // The rank's other threads continue from this reading (docs/time.md).
    publish_threads_clock_offset(timemath::threads_clock_offset(timemath::seconds_to_ns(now), wall_ns));
    g_state.ledger.returned(host_monotonic_ns());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_state.in_reading = false;
    // Every reading under the zero model counts towards a clock spin, however long the
    // machine took to deliver it: the count decides when a busy-wait's sleeps happen.
    return zero_model ? zero_model_reading(host_monotonic_ns()) : now;
}

double clock_peek()
{
    if (!g_state.active) return 0.0;
    if (may_catch_up() && !g_state.in_reading) catch_up();
    if (zero_cpu_model()) return sim_time_at_reply();
    return clock_at(sim_time_at_reply(), thread_cpu_ns(), g_state.slot->cpu_at_reply_ns.load(std::memory_order_acquire));
}

bool enter_library(uint64_t charge_ns, int64_t wall_entry_ns, double* clock_at_entry)
{
    if (!g_state.active || zero_cpu_model() || t_in_call || t_in_post || g_state.in_reading ||
        g_state.ledger.frozen_ns != 0 || !on_simulated_thread() || lockstep::on_lockstep_thread())
        return false;
    g_state.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    *clock_at_entry = clock_at(sim_time_at_reply(), cpu_ns, account_reading(cpu_ns, wall_entry_ns));
    cpuacct::publish_freeze(*g_state.slot, g_state.ledger, cpu_ns, charge_ns);
    g_state.library_charged_ns += charge_ns;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_state.in_reading = false;
    return true;
}

double leave_library()
{
    if (!g_state.active || g_state.ledger.frozen_ns == 0) return clock_peek();
    g_state.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    double now = clock_at(sim_time_at_reply(), cpu_ns, account_reading(cpu_ns, 0));  // synced with the slot
    cpuacct::publish_thaw(*g_state.slot, g_state.ledger, cpu_ns);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_state.in_reading = false;
    g_state.ledger.returned(host_monotonic_ns());
    return now;
}

wire::CallRecordRing* call_records()
{
    return g_state.active ? &wire::call_records_of(*g_state.slot) : nullptr;
}

void drain_call_records()
{
    if (!g_state.active || g_state.in_call) return;
    uint64_t requests = t_requests;
    uint32_t posted = t_posted;
    call(wire::Op::CallRecords, nullptr, 0);
    t_requests = requests;
    t_posted = posted;
}

int64_t threads_clock_offset()
{
    return g_state.slot ? g_state.slot->threads_clock_offset_ns.load(std::memory_order_acquire) : 0;
}

void set_threads_clock_offset(int64_t offset_ns)
{
    if (g_state.slot) publish_threads_clock_offset(offset_ns);
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

int ranks_per_node()
{
    return g_state.active ? g_state.welcome.ranks_per_node : 0;
}

int world_size()
{
    return g_state.active ? g_state.welcome.world_size : 0;
}

bool launched_rank()
{
    return g_state.active && g_state.launched;
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

void count_thread_created()
{
    if (g_state.active) g_state.slot->threads_created.fetch_add(1, std::memory_order_seq_cst);
}

void request_abort()
{
    if (!g_state.active) return;
    g_state.slot->aborts.fetch_add(1, std::memory_order_acq_rel);
    ring_doorbell(*g_state.doorbell);
}

namespace {

void take_turn()
{
    t_waiting_for_turn = true;
    // Counted in the slot while it waits, and the gate told: the server parks a blocking
    // wait of the holder's as long as some thread waits (wire::Slot::turn_waiters).
    bool counted = g_turn.take(current_tid(), [] {
        g_state.slot->turn_waiters.fetch_add(1, std::memory_order_seq_cst);
        ring_doorbell(*g_state.doorbell);
    });
    if (counted) g_state.slot->turn_waiters.fetch_sub(1, std::memory_order_seq_cst);
    t_waiting_for_turn = false;
}

class SlotTurn {
public:
    SlotTurn()
    {
        // Only a signal handler finds this thread waiting for or holding the turn: it
        // interrupted one of the thread's calls. A mirror read leaves the slot alone, so the
        // handler's request may go on; a request or a wait for the turn may not.
        const bool holding = g_turn.holder() == current_tid();
        if (t_waiting_for_turn || (holding && g_state.in_call))
            fatal("not supported yet: a Portals call from a signal handler that interrupted a Portals call of the "
                  "same thread");
        if (holding) {
            taken_ = false;
            return;
        }
        take_turn();
    }
    ~SlotTurn()
    {
        if (taken_) g_turn.give();
    }
    SlotTurn(const SlotTurn&) = delete;
    SlotTurn& operator=(const SlotTurn&) = delete;

private:
    bool taken_ = true;
};

// The server answers a trapped syscall of the simulated thread on the slot too (while that
// thread sleeps in it and another calls us): wait for it to hand the slot back.
void claim_slot()
{
    std::atomic<uint32_t>& state = g_state.slot->state;
    const uint32_t idle = static_cast<uint32_t>(wire::SlotState::Idle);
    uint32_t seen = idle;
    while (!state.compare_exchange_weak(seen, static_cast<uint32_t>(wire::SlotState::Claimed),
                                        std::memory_order_acquire, std::memory_order_relaxed)) {
        if (seen != idle) {
            timespec timeout{0, 1000000};
            sleep_on_slot_state(*g_state.slot, seen, &timeout);
        }
        seen = idle;
    }
}

// Each thread keeps its own copy of its last reply: another thread's request may use the
// slot as soon as this one's ends.
thread_local wire::Reply t_last_reply{};

// The simulated thread's clock after a reply given at `sim_time` (cpu_accounting.hpp).
void clock_after_reply(double sim_time, bool accounted)
{
    wire::Slot& slot = *g_state.slot;
    uint64_t bits;
    memcpy(&bits, &sim_time, sizeof bits);
    int64_t sim_ns = timemath::seconds_to_ns(sim_time);
    // The reply's reading of the CPU clock, then the wall stamp: as little as possible of
    // our own work after them is charged to the application.
    uint64_t reply_cpu_ns = thread_cpu_ns();
    int64_t wall_ns = host_monotonic_ns();
    g_state.wall_at_reply_ns = wall_ns;
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_relaxed);
    slot.cpu_at_reply_ns.store(reply_cpu_ns, std::memory_order_relaxed);
    g_state.ledger.replied(reply_cpu_ns);
    if (g_state.ledger.frozen_ns) slot.cpu_frozen_ns.store(reply_cpu_ns, std::memory_order_relaxed);
    g_state.replies_known.store(wire::mirror_of(slot).replies.load(std::memory_order_acquire), std::memory_order_relaxed);
    publish_threads_clock_offset(timemath::threads_clock_offset(sim_ns, wall_ns));
    g_state.ledger.returned(accounted ? wall_ns : 0);
}

// The server parked this thread's blocking wait and the slot is free for the rank's other
// threads: sleep until the server has written the wait's result into `wait`, this
// thread's own (the server wakes every parked thread of the rank at each result).
void await_parked_result(wire::ParkedWait& wait)
{
    std::atomic<uint32_t>& results = g_state.slot->parked_done;
    const uint32_t done = static_cast<uint32_t>(wire::ParkedState::Done);
    if (lockstep::on_lockstep_thread()) lockstep::wait_parked(wait);  // back with the result
    while (true) {
        uint32_t seen = results.load(std::memory_order_seq_cst);
        if (wait.state.load(std::memory_order_acquire) == done) break;
        timespec timeout{1, 0};
        futex(&results, FUTEX_WAIT, seen, &timeout);
        if (wait.state.load(std::memory_order_acquire) != done && !server_alive())
            fatal("the simulation server is gone; stopping");
    }
    t_last_reply.rc = wait.rc;
    t_last_reply.sim_time = wait.sim_time;
    memcpy(t_last_reply.args, wait.result, sizeof wait.result);
}

}  // namespace

const wire::Reply& call(wire::Op op, const void* args, uint32_t args_size)
{
    // The wall stamp first: what runs after it is ours (cpu_accounting.hpp).
    int64_t wall_entry_ns = host_monotonic_ns();
    lockstep::Shield shield;
    if (!g_state.active) fatal("internal error: request from a process that is not a registered rank");
    if (args_size > wire::kArgBytes) fatal("internal error: request arguments too large");
    ++t_requests;
    // Memory a large payload may land in: the delivery thread is due. Started here, after
    // the wall stamp, its cost is the interposer's (cpu_accounting.hpp).
    start_delivery_thread_if_due(*g_state.slot, op, args, g_state.welcome.copy_once_from);
    // In lockstep, the simulated thread calls as another would (threads/lockstep.hpp).
    const bool lockstep_call = lockstep::on_lockstep_thread();
    const bool simulated_thread = on_simulated_thread() && !lockstep_call;
    if (!g_state.in_call && !g_state.in_reading && simulated_thread)
        if (const wire::Reply* local = outside::absorb(op, args)) return *local;
    ++t_posted;
    // The request and the reply are readings of the CPU clock (cpu_accounting.hpp): the
    // wall stamps frame the application's time between our readings. A request from a
    // nested reading is charged as it stands. Another thread's request leaves the rank's
    // clock to the simulated thread: that thread's computation overlaps the request.
    const bool accounted = !g_state.in_reading && simulated_thread;
    wire::Slot& slot = *g_state.slot;
    bool parked = false;
    // Where the server writes this call's result if it parks the wait: this frame lasts
    // until the result is read.
    wire::ParkedWait parked_result{};
    parked_result.state.store(static_cast<uint32_t>(wire::ParkedState::Waiting), std::memory_order_relaxed);
    {
        SlotTurn turn;
        claim_slot();
        g_state.in_call = true;
        t_in_call = true;
        // Another thread's CPU time is not the rank's computation: its requests carry none.
        uint64_t cpu_ns = simulated_thread ? thread_cpu_ns() : 0;
        uint64_t base =
            accounted ? account_reading(cpu_ns, wall_entry_ns) : slot.cpu_at_reply_ns.load(std::memory_order_acquire);
        wire::Request& request = slot.request;
        request.op = static_cast<uint32_t>(op);
        request.seq = request.seq + 1;  // the server's trap also posts on this slot
        // A sleep or a yield in the MPI library's code waits for progress outside the
        // simulation (TCP, shared memory): the call's CPU time counts from now on, as compute.
        if (accounted && g_state.ledger.frozen_ns && (op == wire::Op::Yield || op == wire::Op::Sleep))
            cpuacct::publish_thaw(slot, g_state.ledger, cpu_ns), base = g_state.ledger.base_ns;
        uint64_t charged_cpu_ns = timemath::charged_cpu_ns(cpu_ns, g_state.ledger.frozen_ns);
        request.cpu_ns = simulated_thread && charged_cpu_ns > base ? charged_cpu_ns - base : 0;
        request.other_thread = simulated_thread ? 0 : 1;
        request.lockstep = lockstep_call ? 1 : 0;
        request.tid = current_tid();
        if (args_size) memcpy(request.args, args, args_size);
        request.parked_record =
            wire::parkable(op, request.args) ? reinterpret_cast<uint64_t>(&parked_result) : 0;
        slot.state.store(static_cast<uint32_t>(wire::SlotState::Posted), std::memory_order_release);
        ring_doorbell(*g_state.doorbell);

        const uint32_t replied = static_cast<uint32_t>(wire::SlotState::Replied);
        brief_wait([&] { return replied_or_delivering(slot); }, host_monotonic_ns, kRankYieldingFloorNs);
        while (slot.state.load(std::memory_order_acquire) != replied) {
            timespec timeout{1, 0};
            sleep_on_slot_state(slot, static_cast<uint32_t>(wire::SlotState::Posted), &timeout);
            if (slot.state.load(std::memory_order_acquire) != replied && !server_alive())
                fatal("the simulation server is gone; stopping");
        }
        t_last_reply = slot.reply;
        if (t_last_reply.seq != request.seq) fatal("internal error: reply out of sequence");
        parked = t_last_reply.rc == wire::kParkedRc;
        if (lockstep_call) lockstep::learn(t_last_reply, slot);
        if (!simulated_thread || parked) {
            // The slot is free for the rank's other threads (a parked wait's result comes later).
            slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
            g_state.in_call = false;
            if (!simulated_thread) t_in_call = false;
            if (!simulated_thread && !parked) threads_clock::replied(op, t_last_reply.rc, t_last_reply.sim_time, false);
        } else {
            clock_after_reply(t_last_reply.sim_time, accounted);
            slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
            g_state.in_call = false;
            t_in_call = false;
            return t_last_reply;
        }
    }
    if (!parked) return t_last_reply;
    await_parked_result(parked_result);
    if (simulated_thread) {
        clock_after_reply(t_last_reply.sim_time, accounted);
        t_in_call = false;
    } else
        threads_clock::replied(op, t_last_reply.rc, t_last_reply.sim_time, true);
    return t_last_reply;
}

bool post(wire::Op op, const void* args, uint32_t args_size)
{
    // The wall stamp first, as in call(): what runs after it is ours.
    int64_t wall_entry_ns = host_monotonic_ns();
    // Another thread's request in progress is no reason to wait: the server serves posted
    // commands after it, as the call would have waited for its turn.
    // Under the zero CPU model only. Under the measured one the rank's code runs while the
    // server serves the command, and it was charged more CPU time per call than when it
    // waited (docs/performance.md "Posted commands"): until that is understood, it waits.
    if (!zero_cpu_model() || !may_catch_up() || g_state.in_reading || args_size > sizeof(wire::PostedCommand::args) ||
        outside::episode_under_way() || lockstep::active())
        return false;
    start_delivery_thread_if_due(*g_state.slot, op, args, g_state.welcome.copy_once_from);
    wire::Slot& slot = *g_state.slot;
    // A full ring: wait for the server to serve its oldest commands, as a NIC's command
    // queue makes the CPU wait.
    if (g_state.posted_head - slot.posted_served.load(std::memory_order_acquire) >= wire::kPostedRing) catch_up();
    t_in_post = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ++t_requests;
    ++t_posted;
    // A reading of the CPU clock, as a request and its reply are (cpu_accounting.hpp): the
    // command carries the compute since the previous one, and the next one counts from here.
    uint64_t cpu_ns = thread_cpu_ns();
    uint64_t base = account_reading(cpu_ns, wall_entry_ns);
    wire::PostedCommand& command = slot.posted[g_state.posted_head % wire::kPostedRing];
    command.op = static_cast<uint32_t>(op);
    command.cpu_ns = cpu_ns > base ? cpu_ns - base : 0;
    memcpy(command.args, args, args_size);
    slot.cpu_at_reply_ns.store(cpu_ns, std::memory_order_release);
    g_state.ledger.replied(cpu_ns);
    g_state.wall_at_reply_ns = host_monotonic_ns();
    slot.posted_head.store(++g_state.posted_head, std::memory_order_release);
    ring_doorbell(*g_state.doorbell);
    g_state.ledger.returned(host_monotonic_ns());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_in_post = false;
    return true;
}

}  // namespace s4bxi::interpose
