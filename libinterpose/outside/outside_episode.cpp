#include "outside/outside_episode.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <portals4.h>

#include <atomic>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/thread_state.hpp"

namespace s4bxi::interpose::outside {

// Shared by the simulated thread and the completing thread, under g_mutex; the last of
// the two to let go deletes it.
struct Operation {
    int holders = 2;
    bool completed = false;
    bool taken = false;  // its callback ran or is running
    void (*invoke)(void*) = nullptr;
    void* context = nullptr;
};

namespace {

pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;

// Under g_mutex.
void let_go(Operation* operation)
{
    if (--operation->holders == 0) delete operation;
}

// The simulated thread's own state.
Operation* g_operation = nullptr;  // of the asynchronous episode under way
int g_blocking_depth = 0;
uint32_t g_polls = 0;
wire::Reply g_local_reply{};

// Shared with the thread that completes the operation.
std::atomic<uint32_t> g_completions{0};  // futex word: bumped at each completion
std::atomic<uint32_t> g_pickups{0};      // futex word: bumped when the simulated thread took a callback
std::atomic<uint64_t> g_activity{0};     // calls of ours on the simulated thread during an episode
std::atomic<bool> g_picking_up{false};   // the simulated thread waits for the completion

// The simulated thread, seen from another: its CPU time, and whether it sleeps in the
// kernel (a condition variable, a pipe).
uint64_t simulated_thread_cpu_ns()
{
    // The kernel's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)).
    clockid_t clock = static_cast<clockid_t>((~static_cast<unsigned>(simulated_thread_id()) << 3) | 6);
    timespec ts{};
    if (syscall(SYS_clock_gettime, clock, &ts) != 0) return 0;
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

bool simulated_thread_sleeping()
{
    return sleeps_on_others(thread_state(getpid(), simulated_thread_id()));
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t seen, long milliseconds)
{
    timespec timeout{milliseconds / 1000, (milliseconds % 1000) * 1000000};
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, &timeout, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>& word)
{
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// Waits for the operation of the episode to complete and runs the program's callback here,
// unless the fallback ran it already. Ends the asynchronous episode.
void pick_up()
{
    Operation* operation = g_operation;
    if (!operation) return;
    g_operation = nullptr;
    g_picking_up.store(true, std::memory_order_release);
    while (true) {
        uint32_t seen = g_completions.load(std::memory_order_acquire);
        pthread_mutex_lock(&g_mutex);
        bool completed = operation->completed;
        pthread_mutex_unlock(&g_mutex);
        if (completed) break;
        futex_wait(g_completions, seen, 1000);
    }
    pthread_mutex_lock(&g_mutex);
    bool ours = !operation->taken;
    operation->taken = true;
    void (*invoke)(void*) = operation->invoke;
    void* context = operation->context;
    let_go(operation);
    pthread_mutex_unlock(&g_mutex);
    g_picking_up.store(false, std::memory_order_release);
    if (ours && invoke) invoke(context);
    g_pickups.fetch_add(1, std::memory_order_acq_rel);
    futex_wake(g_pickups);
}

void announce(wire::OutsideWaitKind kind, const int32_t* ranks, uint32_t count, const char* what)
{
    pick_up();
    wire::OutsideWaitArgs args{};
    args.kind = static_cast<uint32_t>(kind);
    if (kind == wire::OutsideWaitKind::Collective && count > wire::kMaxOutsideParticipants) {
        args.kind = static_cast<uint32_t>(wire::OutsideWaitKind::Unknown);
        count = 0;
    }
    args.count = count;
    std::strncpy(args.what, what, sizeof args.what - 1);
    if (count) std::memcpy(args.ranks, ranks, count * sizeof *ranks);
    call(wire::Op::OutsideWait, &args, sizeof args);
}

const wire::Reply* local_reply(int rc)
{
    g_local_reply.rc = rc;
    return &g_local_reply;
}

bool empty_poll(wire::Op op, const void* args)
{
    if (op == wire::Op::PtlEQGet) return true;
    if (op != wire::Op::PtlEQPoll) return false;
    wire::EQPollArgs poll;
    std::memcpy(&poll, args, sizeof poll);
    return poll.timeout_ms == 0;
}

}  // namespace

void begin_asynchronous(wire::OutsideWaitKind kind, const int32_t* ranks, uint32_t count, const char* what)
{
    announce(kind, ranks, count, what);
    g_polls = 0;
}

void begin_blocking(wire::OutsideWaitKind kind, const int32_t* ranks, uint32_t count, const char* what)
{
    announce(kind, ranks, count, what);
    ++g_blocking_depth;
}

void end_blocking()
{
    if (g_blocking_depth > 0) --g_blocking_depth;
}

bool in_blocking_call()
{
    return g_blocking_depth > 0;
}

Operation* operation_started()
{
    g_operation = new Operation;
    return g_operation;
}

void operation_failed(Operation* operation)
{
    if (g_operation == operation) g_operation = nullptr;
    delete operation;  // the completing thread never had it
}

void operation_completed(Operation* operation, void (*invoke)(void*), void* context)
{
    if (on_simulated_thread()) {  // called back within the call itself: nothing to defer
        pthread_mutex_lock(&g_mutex);
        operation->completed = operation->taken = true;
        let_go(operation);
        pthread_mutex_unlock(&g_mutex);
        invoke(context);
        return;
    }
    pthread_mutex_lock(&g_mutex);
    operation->completed = true;
    operation->invoke = invoke;
    operation->context = context;
    pthread_mutex_unlock(&g_mutex);
    g_completions.fetch_add(1, std::memory_order_acq_rel);
    futex_wake(g_completions);
    // Until the simulated thread takes the callback. If it makes none of our calls while it
    // computes (a spin) or sleeps in the kernel (a condition variable), it waits for the
    // callback in a way of its own: run it here. A thread that is only descheduled gets
    // kFallbackMilliseconds.
    uint64_t activity = g_activity.load(std::memory_order_acquire);
    uint64_t cpu = simulated_thread_cpu_ns();
    int quiet = 0;
    int sleeping = 0;
    while (true) {
        uint32_t seen = g_pickups.load(std::memory_order_acquire);
        bool waits_elsewhere = quiet >= kFallbackMilliseconds || sleeping >= 2 ||
                               (quiet >= 2 && simulated_thread_cpu_ns() - cpu >= 1000000);
        pthread_mutex_lock(&g_mutex);
        bool taken = operation->taken;
        bool ours = !taken && !g_picking_up.load(std::memory_order_acquire) && waits_elsewhere;
        if (ours) operation->taken = true;
        if (taken || ours) let_go(operation);
        pthread_mutex_unlock(&g_mutex);
        if (taken) break;
        if (ours) {
            invoke(context);
            break;
        }
        futex_wait(g_pickups, seen, 1);
        uint64_t now = g_activity.load(std::memory_order_acquire);
        if (now != activity) {
            activity = now;
            cpu = simulated_thread_cpu_ns();
            quiet = sleeping = 0;
            continue;
        }
        ++quiet;
        sleeping = !g_picking_up.load(std::memory_order_acquire) && simulated_thread_sleeping() ? sleeping + 1 : 0;
    }
}

bool episode_under_way()
{
    return g_operation || g_blocking_depth > 0;
}

const wire::Reply* absorb(wire::Op op, const void* args)
{
    // On the path of every request: nothing to do outside an episode.
    if (!g_operation && g_blocking_depth == 0) return nullptr;
    // Only this thread writes it: no read-modify-write needed.
    g_activity.store(g_activity.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    if (op == wire::Op::OutsideWait || op == wire::Op::Backtrace) return nullptr;
    if (g_blocking_depth > 0) {
        if (op == wire::Op::Sleep || op == wire::Op::Yield) return local_reply(0);
        if (empty_poll(op, args)) return local_reply(PTL_EQ_EMPTY);
        return nullptr;
    }
    if (!g_operation) return nullptr;
    if (op == wire::Op::Finalize) {  // leaving: an operation that never completes must not hold the exit
        g_operation = nullptr;
        return nullptr;
    }
    if (empty_poll(op, args) && ++g_polls < kPollsBeforePickup) return local_reply(PTL_EQ_EMPTY);
    pick_up();
    return nullptr;
}

}  // namespace s4bxi::interpose::outside
