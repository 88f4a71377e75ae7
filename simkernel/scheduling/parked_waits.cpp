#include "scheduling/parked_waits.hpp"

#include <portals4.h>
#include <sys/types.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "calls/portals_engine.hpp"
#include "channel/channel_server.hpp"
#include "registration/machine_link.hpp"
#include "run/context.hpp"
#include "s4bxi/slot_futex.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/memory_waits.hpp"
#include "scheduling/rank_proxy.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_parked, "Parked blocking waits");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kThreadCheckInterval = 0.01;  // wall seconds between looks at a rank's other threads

// Forgets the threads that are gone; true if one that lives is outside a parked wait and
// not in the request being served.
bool other_thread_alive_outside_waits(RankRecord& r)
{
    std::erase_if(r.portals_threads, [&r](pid_t tid) {
        char state = r.process().thread_state(r.pid, tid);
        return state == '\0' || state == 'Z' || state == 'X';
    });
    for (pid_t tid : r.portals_threads) {
        bool parked = std::any_of(r.parked.begin(), r.parked.end(), [tid](const ParkedSlot& s) { return s.used && s.tid == tid; });
        bool in_service = r.phase == RankPhase::Waiting && r.serving && r.request.tid == tid;
        if (!parked && !in_service) return true;
    }
    return false;
}

}  // namespace

bool parkable(const wire::Request& request)
{
    return wire::parkable(static_cast<wire::Op>(request.op), request.args);
}

void park_if_needed(RankRecord& r, const wire::Request& request, ParkTicket& ticket)
{
    if (ticket.parked || !parkable(request) || request.parked_record == 0) return;
    if (!request.other_thread && !r.park_requested) return;
    // The result goes to the thread's own record: any number of waits may be parked.
    wire::Slot& slot = *r.slot.object;
    auto free = std::find_if(r.parked.begin(), r.parked.end(), [](const ParkedSlot& s) { return !s.used; });
    auto index = static_cast<uint32_t>(free - r.parked.begin());
    if (free == r.parked.end()) r.parked.emplace_back();
    ParkedSlot& slot_state = r.parked[index];
    slot_state.used = true;
    slot_state.other_thread = request.other_thread != 0;
    slot_state.tid = request.tid;
    slot_state.record = request.parked_record;
    slot_state.wall_deadline = ticket.wall_timeout >= 0 ? wall_now() + ticket.wall_timeout : -1.0;
    slot_state.timed_out = false;
    slot_state.actor = sg4::Actor::self();
    ticket.parked = true;
    ticket.index = index;
    r.park_requested = false;

    wire::Reply& reply = slot.reply;
    reply.rc = wire::kParkedRc;
    reply.seq = request.seq;
    reply.sim_time = sg4::Engine::get_clock();
    reply.lockstep_done = r.lockstep_done;
    reply.memory_writes = r.memory_writes;
    if (request.other_thread) r.phase = r.phase_before_dispatch;
    else r.simulated_thread_parked = true;  // the rank stays in the simulation: it waits
    r.serving = nullptr;
    r.in_service = false;
    XBT_DEBUG("rank %d: %s wait (op %u) parked in %u", r.rank, request.other_thread ? "another thread's" : "its",
              request.op, index);
    mark_reply(r);
    publish_reply(slot);
    publish_to_machine(r);
    context().gate_wakeup->release();
    // This actor stays in the wait; a new proxy serves the rank's next requests.
    RankRecord* record = &r;
    r.proxy = sg4::Actor::create(fmt::format("rank{}", r.rank), sg4::this_actor::get_host(),
                                 [record] { rank_proxy(record); });
}

void finish_parked_wait(RankRecord& r, const wire::Request& request, const wire::Reply& reply, const ParkTicket& ticket)
{
    ParkedSlot& slot_state = r.parked[ticket.index];
    // The result, then its state: the thread reads the result once it sees Done.
    wire::ParkedWait wait{};
    wait.state.store(static_cast<uint32_t>(wire::ParkedState::Done), std::memory_order_relaxed);
    wait.rc = reply.rc;
    wait.sim_time = reply.sim_time;
    // A lockstep wait's number: the rank lets its thread go on once a reply told it that
    // many had ended, at a point of the run that is the same in every run.
    if (request.lockstep) wait.done_number = r.lockstep_done + 1;
    std::memcpy(wait.result, reply.args, sizeof wait.result);
    constexpr size_t kStateBytes = sizeof wait.state;
    const auto* bytes = reinterpret_cast<const uint8_t*>(&wait);
    uint64_t record = slot_state.record;
    if (!request.other_thread) {
        r.simulated_thread_parked = false;
        // Another thread's request in service restores this phase when it ends. Until
        // then the rank stays waiting: a computing rank whose slot holds a request is one
        // the gate dispatches, and it dispatched that request a second time (served twice,
        // and the second reply answered the thread's next request: "reply out of sequence").
        r.phase_before_dispatch = RankPhase::Computing;
        if (!r.in_service) r.phase = RankPhase::Computing;
        r.asleep_since_wall = -1.0;
        memory_budget_restarts(r);
    }
    slot_state = ParkedSlot{};
    mark_reply(r);
    // A process that is gone has no thread to tell.
    if (write_interposer_memory(r, record + kStateBytes, bytes + kStateBytes, sizeof wait - kStateBytes) &&
        write_interposer_memory(r, record, bytes, kStateBytes)) {
        wire::Slot& slot = *r.slot.object;
        slot.parked_done.fetch_add(1, std::memory_order_seq_cst);
        futex(&slot.parked_done, FUTEX_WAKE, INT_MAX, nullptr);
        publish_to_machine(r);
    }
    if (request.lockstep) {
        ++r.lockstep_done;
        if (r.lockstep_idle) r.lockstep_wakeup->release();
    }
    context().gate_wakeup->release();
}

bool look_at_parked_waits(RankRecord& r, double now)
{
    // As long as a thread waits for the turn, the blocking wait that holds it is parked
    // as soon as it is served: a wait the server could not park when the thread began to
    // wait (its request not dispatched yet) is parked later.
    const bool turn_waited_for = r.slot.object->turn_waiters.load(std::memory_order_acquire) != 0;
    if (turn_waited_for && !r.park_requested && r.phase == RankPhase::Waiting && r.serving && parkable(r.request) &&
        r.portals) {
        r.park_requested = true;
        wake_rank_waits(r);
    }
    bool ends_by_itself = false;
    for (ParkedSlot& s : r.parked) {
        if (!s.used || s.wall_deadline < 0) continue;
        if (!s.timed_out && now >= s.wall_deadline) {
            s.timed_out = true;
            wake_rank_waits(r);
        }
        ends_by_itself = true;
    }
    // A thread waiting for the turn makes a call once it has it.
    if (turn_waited_for) return true;
    if (r.portals_threads.empty()) return ends_by_itself;
    // A "no" is always fresh: the simulation may be about to stop for good on it.
    if (!r.other_thread_may_call || now - r.threads_checked_wall >= kThreadCheckInterval) {
        r.threads_checked_wall = now;
        r.other_thread_may_call = other_thread_alive_outside_waits(r);
    }
    return ends_by_itself || r.other_thread_may_call;
}

bool unknown_thread_may_call(const RankRecord& r)
{
    const ProcessAccess& process = r.process();
    for (pid_t tid : process.threads(r.pid)) {
        if (tid == r.tid ||
            std::find(r.portals_threads.begin(), r.portals_threads.end(), tid) != r.portals_threads.end())
            continue;
        char name[32];
        if (process.read_thread_file(r.pid, tid, "comm", name, sizeof name) &&
            std::strncmp(name, "s4bxi-delivery", 14) == 0)
            continue;
        char state = process.thread_state(r.pid, tid);
        char wchan[64];
        if (state == 'R' || (state == 'S' && process.read_thread_file(r.pid, tid, "wchan", wchan, sizeof wchan) &&
                             std::strstr(wchan, "nanosleep")))
            return true;
    }
    return false;
}

void kill_parked_waits(RankRecord& r)
{
    for (ParkedSlot& s : r.parked)
        if (s.used && s.actor) s.actor->kill();
    r.parked.clear();
}

}  // namespace s4bxi::sim
