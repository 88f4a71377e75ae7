#include "services/rank_delivery.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

#include <simgrid/s4u.hpp>

#include "s4bxi/brief_wait.hpp"
#include "s4bxi/slot_futex.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_delivery, "Payloads copied once by the ranks' delivery threads");

namespace s4bxi::sim {
namespace {

using wire::DeliveryState;

// How long one futex sleep of the server lasts before it looks whether the thread still
// lives: a dead thread never answers.
constexpr long kSleepSliceNs = 10'000'000;
// An order the thread has not taken after this long while it is stopped (a debugger, a
// job-control stop) is withdrawn; a running thread on a loaded host is waited for.
constexpr int64_t kStoppedWithdrawNs = 100'000'000;

// How long the server yields for a copy before it sleeps: a base, plus the copy's length at
// a rate that a kernel copy beats on any current host.
constexpr int64_t kCopyPatienceBaseNs = 50'000;
constexpr uint64_t kCopyBytesPerNs = 1;

// How long a thread waiting for its reply, awake, has to take an order before the delivery
// thread is woken for it.
constexpr int64_t kAwakeTakesNs = 20'000;
// From this size on, a payload between two ranks that both wait awake is copied in two
// halves at once, each by one of them (each half as large as the smallest payload copied
// once, by default).
constexpr uint64_t kSplitFrom = 512 * 1024;

uint64_t g_copy_once_from = 0;
DeliveryStats g_stats;
bool g_disabled = false;       // the kernel refused a rank access to another's memory (EPERM)
bool g_warned = false;         // the one warning of an unexpected failure was given

int64_t monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool thread_stopped(const ProcessAccess& machine, pid_t pid, pid_t tid)
{
    char state = machine.thread_state(pid, tid);
    return state == 'T' || state == 't';
}

uint32_t load_state(const wire::Delivery& d)
{
    return d.state.load(std::memory_order_seq_cst);
}

// Yields until `done()` holds or the monotonic clock reaches `deadline_ns`; the thread
// waited for runs on another core, or needs this one.
template <class Done>
void yield_until(Done done, int64_t deadline_ns)
{
    while (!done() && monotonic_ns() < deadline_ns) syscall(SYS_sched_yield);
}

// A thread of the rank waits for the reply to its request and is not asleep on the slot:
// it watches the slot, and the delivery word with it (libinterpose/channel/channel_client.cpp, call()).
bool waiter_awake(const wire::Slot& slot)
{
    return slot.state.load(std::memory_order_seq_cst) == static_cast<uint32_t>(wire::SlotState::Posted) &&
           slot.sleepers.load(std::memory_order_seq_cst) == 0;
}

void set_state_and_wake(wire::Delivery& d, DeliveryState state)
{
    d.state.store(static_cast<uint32_t>(state), std::memory_order_seq_cst);
    if (d.sleepers.load(std::memory_order_seq_cst) != 0) futex(&d.state, FUTEX_WAKE, INT_MAX, nullptr);
}

// The order was not carried out: the caller copies through the server, which fails where
// the thread failed for a reason of the memory or the processes (a bad address, a rank
// gone), and works where the kernel refused the rank what it allows the server.
void note_failure(int error, int target_rank_pid)
{
    ++g_stats.fallbacks;
    if (error == 0 || error == ESRCH || error == EFAULT) return;
    if (error == EPERM) {
        // Expected where ranks may not read each other's memory (Yama's ptrace_scope with
        // ranks that are not descendants of the launcher, docs/usage.md): the rest of the
        // run copies through the server.
        g_disabled = true;
        XBT_INFO("the ranks may not read each other's memory (EPERM): payloads go through the server");
        return;
    }
    if (!g_warned) {
        g_warned = true;
        XBT_WARN("the delivery thread of process %d could not copy a payload (%s): it went through the server",
                 target_rank_pid, std::strerror(error));
    }
}

}  // namespace

namespace {

// One order given to one rank (its read of the payload, or its write of half of it).
struct Order {
    wire::Delivery* d = nullptr;
    const ProcessAccess* machine = nullptr;  // of the rank's process
    pid_t pid = 0;  // the rank's process
    pid_t tid = 0;  // its delivery thread
    uint64_t length = 0;
    int64_t posted_at = 0;
    bool awake_waiter = false;  // a thread of the rank waits for its reply, awake
};

// Gives the order to the rank of `side`; false when it has no delivery thread, or an
// order of its own in progress.
bool post_order(Order& order, const DeliverySide& side, pid_t peer, bool writes, uint64_t source_address,
                uint64_t target_address, uint64_t length)
{
    wire::Delivery& d = side.slot->delivery;
    const auto tid = static_cast<pid_t>(d.thread_id.load(std::memory_order_acquire));
    if (tid <= 0 || load_state(d) != static_cast<uint32_t>(DeliveryState::Idle)) return false;
    d.peer_pid = peer;
    d.writes = writes ? 1 : 0;
    d.source_address = source_address;
    d.target_address = target_address;
    d.length = length;
    d.error = 0;
    d.moved = 0;
    order = Order{&d, side.machine, side.pid, tid, length, monotonic_ns(),
                  side.request_in_service && waiter_awake(*side.slot)};
    if (order.awake_waiter) d.state.store(static_cast<uint32_t>(DeliveryState::Posted), std::memory_order_seq_cst);
    else set_state_and_wake(d, DeliveryState::Posted);
    return true;
}

// An awake waiter takes its order itself (interpose::take_delivery_order), and the
// delivery thread, which may sleep, is woken only if it has not within kAwakeTakesNs (it
// fell asleep meanwhile).
void let_awake_waiters_take(Order* orders, int count)
{
    const uint32_t posted = static_cast<uint32_t>(DeliveryState::Posted);
    auto untaken = [&] {
        for (int i = 0; i < count; ++i)
            if (orders[i].awake_waiter && load_state(*orders[i].d) == posted) return true;
        return false;
    };
    // Yields, not spins: a waiter may be waiting for this very core.
    yield_until([&] { return !untaken(); }, monotonic_ns() + kAwakeTakesNs);
    for (int i = 0; i < count; ++i) {
        wire::Delivery& d = *orders[i].d;
        if (orders[i].awake_waiter && load_state(d) == posted && d.sleepers.load(std::memory_order_seq_cst) != 0)
            futex(&d.state, FUTEX_WAKE, INT_MAX, nullptr);
    }
}

// Waits for the order's end: 0 when it copied everything, else the errno of the copy
// that stopped short, or -1 when it was withdrawn (its thread stopped or gone).
int await_order(const Order& order)
{
    wire::Delivery& d = *order.d;
    const uint32_t done = static_cast<uint32_t>(DeliveryState::Done);
    const uint32_t posted = static_cast<uint32_t>(DeliveryState::Posted);
    // A kernel copy between processes moves about 14 KiB per microsecond on the 2-core
    // test machine (75 us per MiB), on another core: the server yields for about as long
    // as the copy may take before it sleeps, since the wake-up would cost it tens of
    // microseconds more on a virtual machine (the brief wait's 200 yields may be over
    // before a large copy is).
    if (!brief_wait([&] { return load_state(d) == done; }, monotonic_ns))
        yield_until([&] { return load_state(d) == done; },
                    order.posted_at + kCopyPatienceBaseNs + static_cast<int64_t>(order.length / kCopyBytesPerNs));
    while (true) {
        uint32_t seen = load_state(d);
        if (seen == done) break;
        d.sleepers.fetch_add(1, std::memory_order_seq_cst);
        timespec slice{0, kSleepSliceNs};
        futex(&d.state, FUTEX_WAIT, seen, &slice);
        d.sleepers.fetch_sub(1, std::memory_order_seq_cst);
        seen = load_state(d);
        if (seen == done) break;
        const bool alive = order.machine->thread_alive(order.pid, order.tid);
        if (alive && !(seen == posted && monotonic_ns() - order.posted_at > kStoppedWithdrawNs &&
                       thread_stopped(*order.machine, order.pid, order.tid)))
            continue;
        // Withdraw an order nobody took; a thread that died with it taken never answers.
        uint32_t expected = posted;
        if (!alive || d.state.compare_exchange_strong(expected, static_cast<uint32_t>(DeliveryState::Idle),
                                                      std::memory_order_seq_cst)) {
            if (!alive) {
                d.thread_id.store(0, std::memory_order_release);
                d.state.store(static_cast<uint32_t>(DeliveryState::Idle), std::memory_order_seq_cst);
            }
            XBT_DEBUG("process %d: delivery order withdrawn (thread %s)", order.pid, alive ? "stopped" : "gone");
            return -1;
        }
        // Taken meanwhile: it is being carried out.
    }
    const int error = d.error != 0 ? d.error : d.moved == order.length ? 0 : EFAULT;
    set_state_and_wake(d, DeliveryState::Idle);
    return error;
}

// Both ranks wait for their replies, awake, with the simulation serving their requests:
// each can copy half of a large payload, on two cores at once.
bool both_halves_possible(const DeliverySide& source, const DeliverySide& target, uint64_t length)
{
    if (length < kSplitFrom || !source.slot || !source.request_in_service || !target.request_in_service) return false;
    if (!waiter_awake(*source.slot) || !waiter_awake(*target.slot)) return false;
    const wire::Delivery& d = source.slot->delivery;
    return d.thread_id.load(std::memory_order_acquire) > 0 &&
           load_state(d) == static_cast<uint32_t>(DeliveryState::Idle);
}

}  // namespace

bool order_delivery(const DeliverySide& source, const DeliverySide& target, uint64_t length)
{
    if (g_disabled) return false;
    // Halves: the target reads the first, the source writes the second (page-aligned).
    const bool halves = both_halves_possible(source, target, length);
    const uint64_t first = halves ? (length / 2) & ~uint64_t{4095} : length;
    Order orders[2];
    if (!post_order(orders[0], target, source.pid, false, source.address, target.address, first)) return false;
    int count = 1;
    int failure = 0;
    if (halves) {
        if (post_order(orders[1], source, target.pid, true, source.address + first, target.address + first,
                       length - first))
            count = 2;
        else
            failure = -1;  // not expected (both_halves_possible looked): the server copies it all
    }
    let_awake_waiters_take(orders, count);
    for (int i = 0; i < count; ++i)
        if (int error = await_order(orders[i]); error != 0 && failure == 0) failure = error;
    if (failure != 0) {
        note_failure(failure < 0 ? 0 : failure, target.pid);
        return false;
    }
    ++g_stats.orders;
    return true;
}

void set_copy_once_from(uint64_t bytes)
{
    g_copy_once_from = bytes;
}

uint64_t copy_once_from()
{
    return g_copy_once_from;
}

void forget_delivery_thread(wire::Slot& slot)
{
    slot.delivery.thread_id.store(0, std::memory_order_release);
    slot.delivery.state.store(static_cast<uint32_t>(DeliveryState::Idle), std::memory_order_seq_cst);
}

DeliveryStats delivery_stats()
{
    return g_stats;
}

}  // namespace s4bxi::sim
