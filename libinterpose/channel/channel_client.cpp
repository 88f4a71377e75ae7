// The channel client: a request and its reply over the rank's slot (call()), the commands
// the rank posts without waiting (post()), and the turn the rank's threads take at the
// slot and its mirror (ticket_lock.hpp). Below it only the rank's state (rank/) and the
// delivery thread; what the layers above do at points of a request comes through hooks
// (channel_hooks.hpp).
#include "channel/channel_client.hpp"

#include <linux/futex.h>
#include <poll.h>
#include <sys/socket.h>

#include <climits>
#include <cstring>
#include <ctime>

#include "channel/channel_hooks.hpp"
#include "channel/ticket_lock.hpp"
#include "delivery/delivery_thread.hpp"
#include "rank/clock_ledger.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/brief_wait.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/slot_futex.hpp"
#include "s4bxi/time_math.hpp"

namespace s4bxi::interpose {
namespace {

// A rank's threads take turns at its slot and mirror (ticket_lock.hpp). A thread blocked in
// a Portals wait keeps its turn until the server parks the wait.
TicketLock g_turn;

ChannelHooks g_hooks;

// The interposer's code, shielded from the lockstep watchdog's signal while a request is
// under way (threads/lockstep.hpp).
class RequestShield {
public:
    RequestShield() : outer_(g_hooks.shield_request ? g_hooks.shield_request() : false) {}
    ~RequestShield()
    {
        if (g_hooks.unshield_request) g_hooks.unshield_request(outer_);
    }
    RequestShield(const RequestShield&) = delete;
    RequestShield& operator=(const RequestShield&) = delete;

private:
    bool outer_;
};

void other_thread_replied(wire::Op op, int32_t rc, double sim_time, bool parked)
{
    if (g_hooks.other_thread_replied) g_hooks.other_thread_replied(op, rc, sim_time, parked);
}

}  // namespace

bool server_alive()
{
    pollfd pfd{g_rank.socket_fd, POLLIN, 0};
    int ready = poll(&pfd, 1, 0);
    if (ready <= 0) return true;
    if (pfd.revents & (POLLHUP | POLLERR)) return false;
    char byte;
    return recv(g_rank.socket_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0;
}

void install_channel_hooks(const ChannelHooks& hooks)
{
    g_hooks = hooks;
}

// Waits until the server has served every command the simulated thread posted (post()):
// the slot's clock and the mirror then stand as after the reply to the last of them, as
// they would have after a call that waited. The wait is the interposer's, like the wait
// for a reply: its wall time does not count as time blocked outside, nor its CPU time as
// compute.
void catch_up()
{
    wire::Slot& slot = *g_rank.slot;
    auto caught_up = [&] { return slot.posted_served.load(std::memory_order_acquire) == g_rank.posted_head; };
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
            if (served == g_rank.posted_head) break;
            slot.posted_sleepers.fetch_add(1, std::memory_order_seq_cst);
            timespec timeout{1, 0};
            futex(&slot.posted_served, FUTEX_WAIT, served, &timeout);
            slot.posted_sleepers.fetch_sub(1, std::memory_order_release);
            if (!caught_up() && !server_alive()) fatal("the simulation server is gone; stopping");
        }
    }
    g_rank.wall_at_reply_ns += host_monotonic_ns() - wall_before;
    if (zero_model) return;
    uint64_t cpu_after = thread_cpu_ns();
    uint64_t waited = cpu_after - cpu_before;
    g_rank.ledger.base_ns += waited;
    g_rank.ledger.reply_cpu_ns += waited;
    g_rank.ledger.reading_cpu_ns = cpu_after;
    slot.cpu_at_reply_ns.store(g_rank.ledger.base_ns, std::memory_order_release);
    g_rank.ledger.returned(host_monotonic_ns());
}

// The calling thread may catch up (catch_up()): the simulated thread, outside a request.
bool may_catch_up()
{
    return g_rank.active && !t_in_call && !t_waiting_for_turn && !t_in_post && on_simulated_thread();
}

wire::Mirror* readable_mirror()
{
    if (!g_rank.active || g_rank.in_call || g_rank.in_reading || !on_simulated_thread() || lockstep_running())
        return nullptr;  // in lockstep, every call is a request: the order of the threads' calls is the run's
    if (!g_turn.try_take(current_tid())) return nullptr;  // another thread's request: ask the server after it
    catch_up();  // what the rank reads is as of its last reply, posted commands included
    return &wire::mirror_of(*g_rank.slot);
}

void release_mirror()
{
    g_turn.give();
}

wire::Mirror* entry_mirror(uint64_t& replies)
{
    if (!g_rank.active) return nullptr;
    replies = zero_cpu_model() ? g_rank.replies_known.load(std::memory_order_relaxed) : UINT64_MAX;
    return &wire::mirror_of(*g_rank.slot);
}

wire::CallRecordRing* call_records()
{
    return g_rank.active ? &wire::call_records_of(*g_rank.slot) : nullptr;
}

void drain_call_records()
{
    if (!g_rank.active || g_rank.in_call) return;
    uint64_t requests = t_requests;
    uint32_t posted = t_posted;
    call(wire::Op::CallRecords, nullptr, 0);
    t_requests = requests;
    t_posted = posted;
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

void request_abort()
{
    if (!g_rank.active) return;
    g_rank.slot->aborts.fetch_add(1, std::memory_order_acq_rel);
    ring_doorbell(*g_rank.doorbell);
}

namespace {

void take_turn()
{
    t_waiting_for_turn = true;
    // Counted in the slot while it waits, and the gate told: the server parks a blocking
    // wait of the holder's as long as some thread waits (wire::Slot::turn_waiters).
    bool counted = g_turn.take(current_tid(), [] {
        g_rank.slot->turn_waiters.fetch_add(1, std::memory_order_seq_cst);
        ring_doorbell(*g_rank.doorbell);
    });
    if (counted) g_rank.slot->turn_waiters.fetch_sub(1, std::memory_order_seq_cst);
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
        if (t_waiting_for_turn || (holding && g_rank.in_call))
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
    std::atomic<uint32_t>& state = g_rank.slot->state;
    const uint32_t idle = static_cast<uint32_t>(wire::SlotState::Idle);
    uint32_t seen = idle;
    while (!state.compare_exchange_weak(seen, static_cast<uint32_t>(wire::SlotState::Claimed),
                                        std::memory_order_acquire, std::memory_order_relaxed)) {
        if (seen != idle) {
            timespec timeout{0, 1000000};
            sleep_on_slot_state(*g_rank.slot, seen, &timeout);
        }
        seen = idle;
    }
}

// Each thread keeps its own copy of its last reply: another thread's request may use the
// slot as soon as this one's ends.
thread_local wire::Reply t_last_reply{};

// The server parked this thread's blocking wait and the slot is free for the rank's other
// threads: sleep until the server has written the wait's result into `wait`, this
// thread's own (the server wakes every parked thread of the rank at each result).
void await_parked_result(wire::ParkedWait& wait)
{
    std::atomic<uint32_t>& results = g_rank.slot->parked_done;
    const uint32_t done = static_cast<uint32_t>(wire::ParkedState::Done);
    if (on_lockstep_thread() && g_hooks.lockstep_wait_parked) g_hooks.lockstep_wait_parked(wait);  // back with the result
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
    RequestShield shield;
    if (!g_rank.active) fatal("internal error: request from a process that is not a registered rank");
    if (args_size > wire::kArgBytes) fatal("internal error: request arguments too large");
    ++t_requests;
    // Memory a large payload may land in: the delivery thread is due. Started here, after
    // the wall stamp, its cost is the interposer's (cpu_accounting.hpp).
    start_delivery_thread_if_due(*g_rank.slot, op, args, g_rank.welcome.copy_once_from);
    // In lockstep, the simulated thread calls as another would (threads/lockstep.hpp).
    const bool lockstep_call = on_lockstep_thread();
    const bool simulated_thread = on_simulated_thread() && !lockstep_call;
    if (!g_rank.in_call && !g_rank.in_reading && simulated_thread)
        if (g_hooks.absorb_outside)
            if (const wire::Reply* local = g_hooks.absorb_outside(op, args)) return *local;
    ++t_posted;
    // The request and the reply are readings of the CPU clock (cpu_accounting.hpp): the
    // wall stamps frame the application's time between our readings. A request from a
    // nested reading is charged as it stands. Another thread's request leaves the rank's
    // clock to the simulated thread: that thread's computation overlaps the request.
    const bool accounted = !g_rank.in_reading && simulated_thread;
    wire::Slot& slot = *g_rank.slot;
    bool parked = false;
    // Where the server writes this call's result if it parks the wait: this frame lasts
    // until the result is read.
    wire::ParkedWait parked_result{};
    parked_result.state.store(static_cast<uint32_t>(wire::ParkedState::Waiting), std::memory_order_relaxed);
    {
        SlotTurn turn;
        claim_slot();
        g_rank.in_call = true;
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
        if (accounted && g_rank.ledger.frozen_ns && (op == wire::Op::Yield || op == wire::Op::Sleep))
            cpuacct::publish_thaw(slot, g_rank.ledger, cpu_ns), base = g_rank.ledger.base_ns;
        uint64_t charged_cpu_ns = timemath::charged_cpu_ns(cpu_ns, g_rank.ledger.frozen_ns);
        request.cpu_ns = simulated_thread && charged_cpu_ns > base ? charged_cpu_ns - base : 0;
        request.other_thread = simulated_thread ? 0 : 1;
        request.lockstep = lockstep_call ? 1 : 0;
        request.tid = current_tid();
        if (args_size) memcpy(request.args, args, args_size);
        request.parked_record =
            wire::parkable(op, request.args) ? reinterpret_cast<uint64_t>(&parked_result) : 0;
        slot.state.store(static_cast<uint32_t>(wire::SlotState::Posted), std::memory_order_release);
        ring_doorbell(*g_rank.doorbell);

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
        if (lockstep_call && g_hooks.lockstep_reply) g_hooks.lockstep_reply(t_last_reply, slot);
        if (!simulated_thread || parked) {
            // The slot is free for the rank's other threads (a parked wait's result comes later).
            slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
            g_rank.in_call = false;
            if (!simulated_thread) t_in_call = false;
            if (!simulated_thread && !parked) other_thread_replied(op, t_last_reply.rc, t_last_reply.sim_time, false);
        } else {
            clock_after_reply(t_last_reply.sim_time, accounted);
            slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
            g_rank.in_call = false;
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
        other_thread_replied(op, t_last_reply.rc, t_last_reply.sim_time, true);
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
    if (!zero_cpu_model() || !may_catch_up() || g_rank.in_reading || args_size > sizeof(wire::PostedCommand::args) ||
        (g_hooks.outside_episode_under_way && g_hooks.outside_episode_under_way()) || lockstep_running())
        return false;
    start_delivery_thread_if_due(*g_rank.slot, op, args, g_rank.welcome.copy_once_from);
    wire::Slot& slot = *g_rank.slot;
    // A full ring: wait for the server to serve its oldest commands, as a NIC's command
    // queue makes the CPU wait.
    if (g_rank.posted_head - slot.posted_served.load(std::memory_order_acquire) >= wire::kPostedRing) catch_up();
    t_in_post = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    ++t_requests;
    ++t_posted;
    // A reading of the CPU clock, as a request and its reply are (cpu_accounting.hpp): the
    // command carries the compute since the previous one, and the next one counts from here.
    uint64_t cpu_ns = thread_cpu_ns();
    uint64_t base = account_reading(cpu_ns, wall_entry_ns);
    wire::PostedCommand& command = slot.posted[g_rank.posted_head % wire::kPostedRing];
    command.op = static_cast<uint32_t>(op);
    command.cpu_ns = cpu_ns > base ? cpu_ns - base : 0;
    memcpy(command.args, args, args_size);
    slot.cpu_at_reply_ns.store(cpu_ns, std::memory_order_release);
    g_rank.ledger.replied(cpu_ns);
    g_rank.wall_at_reply_ns = host_monotonic_ns();
    slot.posted_head.store(++g_rank.posted_head, std::memory_order_release);
    ring_doorbell(*g_rank.doorbell);
    g_rank.ledger.returned(host_monotonic_ns());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_in_post = false;
    return true;
}

}  // namespace s4bxi::interpose
