#include "rank/rank_state.hpp"

#include <sys/syscall.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

#include "s4bxi/time_math.hpp"

namespace s4bxi::interpose {

RankState g_rank;
thread_local __attribute__((tls_model("initial-exec"))) uint64_t t_requests = 0;
thread_local __attribute__((tls_model("initial-exec"))) uint32_t t_posted = 0;
thread_local __attribute__((tls_model("initial-exec"))) bool t_in_call = false;
thread_local volatile bool t_waiting_for_turn = false;
thread_local volatile bool t_in_post = false;
thread_local __attribute__((tls_model("initial-exec"))) int t_lockstep_index = -1;
std::atomic<bool> g_lockstep_running{false};

namespace {

using ClockGettime = int (*)(clockid_t, timespec*);
std::atomic<ClockGettime> g_libc_clock_gettime{nullptr};  // libc's, for host_monotonic_ns()

}  // namespace

[[noreturn]] void fatal(const char* what)
{
    char buffer[512];
    int n = snprintf(buffer, sizeof buffer, "s4bxi: rank %d: %s\n", g_rank.rank, what);
    if (n > 0) (void)!write(STDERR_FILENO, buffer, static_cast<size_t>(n) < sizeof buffer ? n : sizeof buffer - 1);
    _exit(70);
}

pid_t current_tid()
{
    // Initial-exec TLS and no guard: this is on the path of every request and clock reading.
    static thread_local __attribute__((tls_model("initial-exec"))) pid_t tid = 0;
    if (tid == 0) tid = static_cast<pid_t>(syscall(SYS_gettid));
    return tid;
}

bool is_rank()
{
    return g_rank.active;
}

void leave_run()
{
    g_rank.active = false;
}

bool in_call()
{
    return g_rank.in_call;
}

bool zero_cpu_model()
{
    return g_rank.welcome.cpu_model == static_cast<uint32_t>(wire::CpuModel::Zero);
}

bool threads_lockstep()
{
    return g_rank.welcome.threads_lockstep != 0;
}

uint64_t requests_made()
{
    return t_requests;
}

bool on_simulated_thread()
{
    return g_rank.active && current_tid() == g_rank.tid;
}

int simulated_thread_id()
{
    return g_rank.active ? g_rank.tid : 0;
}

double virtual_epoch()
{
    return g_rank.welcome.epoch;
}

const char* node_name()
{
    return g_rank.welcome.node_name;
}

int rank_id()
{
    return g_rank.rank;
}

int ranks_per_node()
{
    return g_rank.active ? g_rank.welcome.ranks_per_node : 0;
}

int world_size()
{
    return g_rank.active ? g_rank.welcome.world_size : 0;
}

bool launched_rank()
{
    return g_rank.active && g_rank.launched;
}

void count_thread_created()
{
    if (g_rank.active) g_rank.slot->threads_created.fetch_add(1, std::memory_order_seq_cst);
}

int create_own_thread(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument)
{
    using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
    static const auto next = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
    return next(thread, attributes, start, argument);
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

}  // namespace s4bxi::interpose
