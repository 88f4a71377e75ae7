#include "scheduling/gate.hpp"

#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sys/socket.h>
#include <time.h>

#include <fmt/format.h>
#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>
#include <vector>

#include "calls/portals_engine.hpp"
#include "observation/progress_line.hpp"
#include "portals/portals_report.hpp"
#include "registration/machine_link.hpp"
#include "registration/rank_socket.hpp"
#include "run/context.hpp"
#include "s4bxi/thread_state.hpp"
#include "s4bxi/time_math.hpp"
#include "scheduling/memory_waits.hpp"
#include "scheduling/parked_waits.hpp"
#include "scheduling/rank_throttle.hpp"
#include "scheduling/thread_hold.hpp"
#include "services/outside_wait_service.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_gate, "The conservative gate");

namespace s4bxi::sim {

uint64_t g_requests_served = 0;
uint32_t g_node_count = 0;

namespace {

namespace sg4 = simgrid::s4u;

bool running(const RankRecord& r)
{
    return r.phase == RankPhase::Computing || r.phase == RankPhase::BlockedOutside;
}

// One line per rank: what it is doing, and for a waiting rank, where.
std::string describe_ranks()
{
    std::string text;
    for (auto& r : context().registry.ranks()) {
        text += fmt::format("\n  rank {} (pid {}, {}): ", r->rank, r->pid, r->node_name);
        if (r->outside_wait != OutsideWait::None && r->phase != RankPhase::Finished && r->phase != RankPhase::Dead) {
            text += fmt::format("outside the simulation in {} ({})", r->outside_what, to_string(r->outside_wait));
            continue;
        }
        if (r->waits_on_memory) {
            text += "waiting on its memory (computing with no Portals call, for a write that does not come)";
            continue;
        }
        text += to_string(r->phase);
        if (r->phase == RankPhase::Waiting && !r->waiting_on.empty()) text += " in " + r->waiting_on.str();
        if (r->portals && r->phase != RankPhase::Finished && r->phase != RankPhase::Dead)
            text += describe_portals_state(*r->portals);
    }
    return text;
}

// A request waits in the slot, or a command the rank posted without waiting (wire::
// PostedCommand): the gate dispatches either as a request, posted commands first (the
// simulated thread wrote them before any request it makes after them).
bool posted(const RankRecord& r)
{
    return posted_pending(r) ||
           r.slot.object->state.load(std::memory_order_acquire) == static_cast<uint32_t>(wire::SlotState::Posted);
}

// The request the gate would dispatch next for a posted rank (posted()).
wire::Request next_request(const RankRecord& r)
{
    if (!posted_pending(r)) return r.slot.object->request;
    const wire::PostedCommand& command = r.slot.object->posted[r.posted_taken % wire::kPostedRing];
    wire::Request request{};
    request.op = command.op;
    request.cpu_ns = command.cpu_ns;
    request.tid = r.tid;
    std::memcpy(request.args, command.args, sizeof command.args);
    return request;
}

// True when the rank's simulated thread is sleeping in the kernel (a pipe, a futex, a
// PMIx fence), false when it runs or waits for a CPU: on a loaded machine a runnable rank
// can go without CPU time for a while without being blocked. A stopped thread (job
// control, a debugger) is not asleep either: it waits for nothing of the simulation and
// goes on where it stopped, so it holds simulated time as a descheduled one does; nor is
// one in the kernel's own work for it (a major page fault: sleeps_on_others()).
bool thread_sleeping(const RankRecord& r)
{
    return sleeps_on_others(r.process().thread_state(r.pid, r.tid));
}

// Computing <-> blocked outside, from the CPU clock and the state of the rank's simulated
// thread. Its other threads (a runtime's worker spinning, another thread in MPI_Init_thread's
// wait loops) do not live in simulated time and do not hold it: taking their CPU time for
// the rank's would hold every rank while the simulated thread waits for them, and any of
// their requests that needs simulated time to pass would never complete. Blocked takes
// two looks at least blocked_window apart that both found the thread asleep, with no CPU
// time used and no request of its own made in between: a
// single look after the server itself went without a CPU for a while (a loaded machine)
// could otherwise catch a computing rank in a brief sleep of its own, such as the futex
// wait for the reply to a request it posted just after the gate looked at its slot. A
// rank taken for blocked lets simulated time run without it, and under the zero CPU
// model the run would no longer be the same from one run to the next.
void update_cpu_progress(RankRecord& r, double now)
{
    uint64_t cpu = r.thread_cpu.now_ns();
    uint64_t request = r.simulated_thread_requests;
    if (cpu != r.cpu_seen_ns) {
        r.cpu_seen_ns = cpu;
        r.asleep_since_wall = -1.0;
        if (r.phase == RankPhase::BlockedOutside) {
            XBT_DEBUG("rank %d runs again", r.rank);
            r.phase = RankPhase::Computing;
        }
        return;
    }
    if (r.phase != RankPhase::Computing) return;
    if (!thread_sleeping(r) || (r.asleep_since_wall >= 0 && request != r.asleep_request)) {
        r.asleep_since_wall = -1.0;
        return;
    }
    if (r.asleep_since_wall < 0) {
        r.asleep_since_wall = now;
        r.asleep_request = request;
        return;
    }
    if (now - r.asleep_since_wall <= context().config.blocked_window) return;
    // Waiting for our seccomp supervisor is the server's own work, however long a loaded
    // machine makes it.
    if (r.process().thread_waits_for_seccomp_supervisor(r.pid, r.tid)) {
        r.asleep_since_wall = -1.0;
        return;
    }
    XBT_DEBUG("rank %d is blocked outside the simulation", r.rank);
    r.phase = RankPhase::BlockedOutside;
    end_hold(r);
    ++r.host_decisions.blocked_outside;
}

void on_rank_death(RankRecord& r)
{
    r.end_time = sg4::Engine::get_clock();
    // Its proxy may be in the middle of a request (a thread that exits, a signal) or waiting
    // for the next one: either would wait for ever.
    if (r.proxy) r.proxy->kill();
    kill_parked_waits(r);
    // Exited from a thread while another thread's request held the slot: a normal end.
    if (uint32_t status = r.slot.object->exit_status_plus_one.load(std::memory_order_acquire); status && !r.crash_signal) {
        r.phase = RankPhase::Finished;
        r.exit_status = static_cast<int>(status - 1);
        return;
    }
    r.phase = RankPhase::Dead;
    // A process manager stops every rank when one exits with a failure: name that one.
    const RankRecord* failed = nullptr;
    for (auto& other : context().registry.ranks())
        if (other->phase == RankPhase::Finished && other->exit_status != 0 && (!failed || other->end_time < failed->end_time))
            failed = other.get();
    bool machine_lost = r.machine && r.machine->gone();
    std::string how = r.crash_signal ? fmt::format("was killed by signal {} ({})", r.crash_signal, sigabbrev_np(r.crash_signal) ? sigabbrev_np(r.crash_signal) : "?")
                      : machine_lost ? std::string("was lost with its machine")
                      : failed       ? std::string("was stopped before finishing")
                                     : std::string("ended without finishing (exit before the end of the run, or killed)");
    std::string where = r.machine ? fmt::format(", machine {}", r.machine->machine()) : "";
    std::string text = fmt::format("rank {} (pid {}, {}{}) {} at simulated time {:.9f} s", r.rank, r.pid, r.node_name,
                                   where, how, r.end_time);
    if (machine_lost) {
        std::string ranks;
        for (auto& other : context().registry.ranks())
            if (other->machine == r.machine) ranks += (ranks.empty() ? "" : ", ") + std::to_string(other->rank);
        text += fmt::format(": machine {} ({}) was lost ({}); the ranks there: {}", r.machine->machine(),
                            r.machine->peer(), r.machine->why_gone(), ranks);
    }
    if (failed && !r.crash_signal)
        text += fmt::format(", after rank {} exited with status {} at {:.9f} s (a process manager such as mpirun stops "
                            "the other ranks when one fails)",
                            failed->rank, failed->exit_status, failed->end_time);
    if (!r.crash_report.empty()) text += "\nbacktrace of rank " + std::to_string(r.rank) + ":\n" + r.crash_report;
    context().outcome.fail("rank-crash", text, kExitRankCrash);
}

// Serves the rank's socket (a re-attach after exec); returns true when it is closed: the
// process is gone, and on_rank_death() has recorded how.
bool rank_gone(RankRecord& r)
{
    // A rank of another machine: its agent tells when its socket ended, or is lost.
    if (serve_rank(r, g_node_count) != SocketStatus::Closed) return false;
    on_rank_death(r);
    return true;
}

// Looks at every unfinished rank's socket now, whenever it was last looked at; true if
// one of them is gone.
bool any_rank_gone()
{
    for (auto& rank : context().registry.ranks()) {
        RankRecord& r = *rank;
        if (r.phase == RankPhase::Finished || r.phase == RankPhase::Dead) continue;
        r.checked_wall = wall_now();
        if (rank_gone(r)) return true;
    }
    return false;
}

// Time to the next simulated event, or -1 if nothing in the simulation is pending.
double next_event_delay()
{
    double now = sg4::Engine::get_clock();
    double best = -1.0;
    for (auto* model : sg4::Engine::get_instance()->get_all_models()) {
        double delay = model->next_occurring_event(now);
        if (delay >= 0 && (best < 0 || delay < best)) best = delay;
    }
    double timer = simgrid::kernel::timer::Timer::next();
    if (timer >= 0 && (best < 0 || timer - now < best)) best = std::max(0.0, timer - now);
    return best;
}

// While the gate is parked in simulated time: the date it wakes at (infinity: only when
// woken); < 0 while it runs or waits in real time, holding simulated time.
double g_gate_wakes_at = -1.0;

// Parks the gate until a rank runs again or an empty poll begins (wake_gate_for_poll).
void park_gate()
{
    g_gate_wakes_at = std::numeric_limits<double>::infinity();
    context().gate_wakeup->acquire();
    g_gate_wakes_at = -1.0;
}

// Lets simulated time run until `date` at most (a rank that runs again wakes the gate
// sooner), then ends the empty polls due by then: their deadlines are the gate's to keep.
// A kernel timer rather than a timed wait, which is an activity of the CPU model: the
// timer adds no action for the models to update.
void advance_until(double date)
{
    bool fired = date <= sg4::Engine::get_clock();
    if (!fired) {
        auto* timer = simgrid::kernel::timer::Timer::set(date, [&fired] {
            fired = true;
            context().gate_wakeup->release();
        });
        g_gate_wakes_at = date;
        context().gate_wakeup->acquire();
        g_gate_wakes_at = -1.0;
        if (!fired) timer->remove();  // a rank ran again first
    }
    end_polls(fired ? date : sg4::Engine::get_clock());
}

// Lets simulated time run for `delay` at most, or until the earliest deadline of an empty
// poll if that comes first (then advance_until, to end the poll there).
void advance_for(double delay)
{
    double now = sg4::Engine::get_clock();
    double poll = earliest_poll_deadline();
    if (poll >= 0 && poll <= now + delay) return advance_until(poll);
    g_gate_wakes_at = now + delay;
    context().gate_wakeup->acquire_timeout(delay);
    g_gate_wakes_at = -1.0;
}

// Set while the gate waits in simulated time for the next event with ranks outside the
// simulation (advance_to_next_event). That event was the next one when the gate looked,
// but it may be gone before its date: the E2E retransmission deadline of a message whose
// acknowledgement was still on its way (its actors had not started their activities
// yet) is removed when the acknowledgement lands. Asleep until then, the gate would see
// the simulation fall idle and the engine run the clock 10 s on to its own wake-up. Woken
// each time the clock moves, it looks again at the date it has reached (test: ranks whose
// main thread joins the threads that call Portals).
bool g_gate_waits_for_next_event = false;

// Parks the gate until the clock moves (or a rank runs again, an event is withdrawn).
// Unlike advance_to_next_event(), it leaves the models alone (activity_pending()).
void park_until_time_moves()
{
    g_gate_waits_for_next_event = true;
    park_gate();
    g_gate_waits_for_next_event = false;
}

// Wakes the gate if it waits for the next event (advance_to_next_event,
// park_until_time_moves): something changed what that event is.
void wake_gate_waiting_for_next_event()
{
    if (!g_gate_waits_for_next_event || g_gate_wakes_at < 0) return;
    g_gate_wakes_at = -1.0;
    context().gate_wakeup->release();
}

void wake_gate_when_time_moves()
{
    // From maestro: done at once, nothing suspended.
    sg4::Engine::on_time_advance_cb([](double) { wake_gate_waiting_for_next_event(); });
}

// The wait of advance_for for the next event, woken sooner by any other event.
void advance_to_next_event(double delay)
{
    g_gate_waits_for_next_event = true;
    advance_for(delay);
    g_gate_waits_for_next_event = false;
}

// True when some simulated activity is under way (a transfer, a computation, a sleep, a
// timed wait) or a timer is set: something that may still happen without any rank's help.
// Unlike next_event_delay(), it leaves the models as they are: asking them for their next
// event updates their actions, and doing that at other moments than the engine does
// moves simulated dates by SimGrid's precision (1 ns).
bool activity_pending()
{
    if (simgrid::kernel::timer::Timer::next() >= 0) return true;
    for (auto* model : sg4::Engine::get_instance()->get_all_models())
        if (!model->get_started_action_set()->empty()) return true;
    return false;
}

// Yields once; true when other actors ran meanwhile: the simulation is not quiet yet.
bool others_ran_on_yield()
{
    uint64_t activity = g_sim_activity;
    sg4::this_actor::yield();
    return activity != g_sim_activity;
}

// True when the simulation is quiet: other actors did not run when the gate yielded (a
// proxy that begins a wait counts: the engine sets the wait's timeout only after the
// proxy yields), every empty poll's proxy is in its wait (one still on its way may set a
// timeout of its own, for an event queued but visible later), and no activity is under
// way. The gate only looks for a stall then.
bool quiet()
{
    return !others_ran_on_yield() && polls_settled() && !activity_pending();
}

// A stall: nothing is left to happen in the simulation but the deadlines of empty polls.
// A real polling loop would go round at once, and the rank's own code between two polls
// may be what moves the run on (a loop that tests a receive while it prepares its next
// send): the polls end now, with no fast-forward. Polls that end this way with no other
// progress for `window` seconds of wall time are a deadlock.
void end_polls_at_stall(double window)
{
    static double streak_since = -1.0;  // wall time of the first stall with no progress since
    static uint64_t progress_mark = 0;
    uint64_t progress = g_requests_served - g_vain_polls;
    double now = wall_now();
    if (streak_since < 0 || progress != progress_mark) {
        streak_since = now;
        progress_mark = progress;
    } else if (now - streak_since > window) {
        context().outcome.fail("deadlock",
                               fmt::format("deadlock at simulated time {:.9f} s: for {:.0f} s of wall time every rank "
                                           "has polled in vain or waited in a fence for the others, with nothing on "
                                           "its way to any of them:{}",
                                           sg4::Engine::get_clock(), window, describe_ranks()),
                               kExitDeadlock);
        return;
    }
    end_polls(std::numeric_limits<double>::infinity());
}

constexpr double kQuietCheckInterval = 1e-3;  // wall seconds between looks at a rank's socket and CPU clock
constexpr double kHorizonMargin = 20e-6;      // simulated seconds: the interposer's own CPU time, at most
constexpr double kHorizonStep = 50e-6;        // simulated seconds; below it the gate waits for news
// Wall seconds of polls ended at stalls, with no other progress, after which every rank
// polling in vain is a deadlock.
constexpr double kVainPollingWindow = 10.0;

// Under the measured CPU model, the earliest simulated date of a rank's next request: its
// last reply plus the CPU time its simulated thread has used since (a posted rank: the CPU
// time it reported), less a margin for the interposer's own time, which the rank leaves
// out of its count. Under the zero CPU model, its last reply.
double earliest_next_request(const RankRecord& r, bool posted)
{
    const Config& config = context().config;
    double reply = r.slot.object->sim_time_at_reply();
    if (config.cpu_model == wire::CpuModel::Zero) return reply;
    if (!r.holders.empty()) return sg4::Engine::get_clock();  // other threads go on from now
    double seconds;
    if (posted) {
        uint64_t cpu_ns = posted_pending(r) ? r.slot.object->posted[r.posted_taken % wire::kPostedRing].cpu_ns
                                            : r.slot.object->request.cpu_ns;
        seconds = static_cast<double>(cpu_ns) * 1e-9 * config.cpu_factor;
    } else {
        // The frozen clock read before the base: the rank moves them in the order that
        // shows a reader in between an earlier date (libinterpose/time/virtual_clock.cpp, enter_library()).
        uint64_t frozen = r.slot.object->cpu_frozen_ns.load(std::memory_order_acquire);
        uint64_t base = r.slot.object->cpu_at_reply_ns.load(std::memory_order_acquire);
        uint64_t cpu = timemath::charged_cpu_ns(r.thread_cpu.now_ns(), frozen);
        seconds = cpu > base ? static_cast<double>(cpu - base) * 1e-9 * config.cpu_factor - kHorizonMargin : 0.0;
    }
    return seconds >= config.cpu_threshold ? reply + seconds : reply;
}

void dispatch(const std::vector<RankRecord*>& batch)
{
    for (RankRecord* r : batch) {  // in rank order: the registry is sorted
        resume_rank(*r);
        r->serving_posted = posted_pending(*r);
        r->request = next_request(*r);
        if (r->serving_posted) ++r->posted_taken;
        // Another thread's request says nothing of the simulated thread, which may still
        // be in the wait it announced (a PMIx fence).
        if (!r->request.other_thread) {
            ++r->simulated_thread_requests;
            end_outside_wait(*r);
            memory_wait_over(*r);
        }
        if (r->request.lockstep) set_lockstep(*r, true);
        else if (!r->request.other_thread) set_lockstep(*r, false);
        r->lockstep_held_since = -1.0;
        if (r->request.op != static_cast<uint32_t>(wire::Op::LockstepIdle)) r->lockstep_vain_since = -1.0;
        if (r->request.other_thread && !r->request.lockstep &&
            std::find(r->portals_threads.begin(), r->portals_threads.end(), r->request.tid) == r->portals_threads.end())
            r->portals_threads.push_back(r->request.tid);
        hold_at_dispatch(*r);
        r->phase_before_dispatch = r->phase;
        r->in_service = true;
        r->phase = RankPhase::Waiting;
        r->dispatch->release();
    }
}

// Under the measured CPU model, while ranks compute, the simulation need not stand still:
// nothing they do can happen before the earliest date at which one of them may post
// (`horizon`). Requests posted for earlier dates are served, in rank order, and simulated
// time runs up to the horizon. The network makes progress while a rank computes, and a
// rank that spins on its own memory sees a remote write land. Returns false when there
// is nothing to do (the zero CPU model: computing ranks hold time at their last reply).
bool progress_under_computing_ranks(const std::vector<RankRecord*>& batch)
{
    Context& ctx = context();
    if (ctx.config.cpu_model == wire::CpuModel::Zero) return false;
    double horizon = -1.0;
    // Each computing rank's earliest date, read once (its CPU clock is a /proc read): the
    // horizon is their minimum, and the ranks far past it are stopped (rank_throttle.hpp).
    std::vector<std::pair<RankRecord*, double>> computing;
    for (auto& rank : ctx.registry.ranks()) {
        RankRecord& r = *rank;
        if (r.phase != RankPhase::Computing || r.outside_wait == OutsideWait::Others || posted(r)) {
            resume_rank(r);
            continue;
        }
        double earliest = earliest_next_request(r, false);
        if (horizon < 0 || earliest < horizon) horizon = earliest;
        computing.emplace_back(&r, earliest);
    }
    if (horizon < 0) return false;
    for (auto [r, earliest] : computing) {
        if (r->outside_wait == OutsideWait::None) throttle_if_ahead(*r, earliest, horizon);
        else resume_rank(*r);
    }
    std::vector<RankRecord*> ready;
    for (RankRecord* r : batch)
        if (earliest_next_request(*r, true) <= horizon) ready.push_back(r);
    if (!ready.empty()) {
        dispatch(ready);
        sg4::this_actor::yield();
        return true;
    }
    // By steps: a computing rank's CPU clock moves on all the time. The proxies' own
    // computations are simulated activities too, which only the engine sees through
    // (next_event_delay() does not while their start is pending): the step is taken
    // whatever is pending.
    double now = sg4::Engine::get_clock();
    if (horizon - now < kHorizonStep) return false;
    advance_for(horizon - now);  // a rank that runs again wakes the gate
    return true;
}

// Some rank has started a thread that may still make a call (unknown_thread_may_call),
// for less than the deadlock timeout. Only ranks whose count of threads created moved
// since the last look are looked at in /proc: this runs each time the gate parks.
constexpr double kStartingThreadLook = 0.02;  // wall seconds

bool waits_for_starting_thread(double now)
{
    static double since = -1.0;
    Context& ctx = context();
    bool may_call = false;
    for (auto& rank : ctx.registry.ranks()) {
        RankRecord& r = *rank;
        if (r.phase == RankPhase::Finished || r.phase == RankPhase::Dead) continue;
        uint32_t created = r.slot.object->threads_created.load(std::memory_order_seq_cst);
        if (created == r.threads_accounted) continue;
        // A thread seen asleep once may be between two steps of its start (a lock of the
        // dynamic loader, a page fault): the new ones are taken for quiet only when two
        // looks kStartingThreadLook apart found them so.
        if (unknown_thread_may_call(r)) {
            r.threads_quiet_since = -1.0;
            may_call = true;
            break;
        }
        if (r.threads_quiet_since < 0) r.threads_quiet_since = now;
        if (now - r.threads_quiet_since < kStartingThreadLook) {
            may_call = true;
            break;
        }
        r.threads_accounted = created;
        r.threads_quiet_since = -1.0;
    }
    if (!may_call) {
        since = -1.0;
        return false;
    }
    if (since < 0) since = now;
    return now - since <= ctx.config.outside_deadlock_timeout;
}

// A lockstep rank holds simulated time as long as one of its threads runs: one that
// never calls again (blocked in something that no other thread of the rank can end) would
// hold it for ever.
void check_lockstep_holds(RankRecord& r, double now)
{
    if (r.lockstep_held_since < 0) r.lockstep_held_since = now;
    double held = now - r.lockstep_held_since;
    if (held <= context().config.outside_deadlock_timeout) return;
    context().outcome.fail("deadlock",
                           fmt::format("rank {}: its threads, in lockstep, have made no call for {:.0f} s of wall "
                                       "time; one of them is blocked outside the simulation, in something the "
                                       "interposer does not know:{}",
                                       r.rank, held, describe_ranks()),
                           kExitDeadlock);
}

// A rank whose threads in lockstep can only spin waits in a LockstepIdle for a write into
// its memory. With nothing under way in the simulation none can come: the wait ends and
// its threads go on, at the same date. One of them may not have been spinning but
// computing (0.25 ms of CPU time with no call: a long system call at the end of a run);
// the rank then waited for ever, the simulation reported a deadlock. Threads that spin
// for good come back to it: past the deadlock timeout of wall time, a deadlock.
bool end_vain_memory_waits(double now)
{
    bool ended = false;
    for (auto& rank : context().registry.ranks()) {
        RankRecord& r = *rank;
        if (!r.lockstep_idle || !r.waits_on_memory) continue;
        if (r.lockstep_vain_since < 0) {
            r.lockstep_vain_since = now;
        } else if (now - r.lockstep_vain_since > context().config.outside_deadlock_timeout) {
            context().outcome.fail("deadlock",
                                   fmt::format("rank {}: its threads, in lockstep, have spun on its memory for {:.0f} s "
                                               "of wall time with nothing under way in the simulation that could "
                                               "write to it:{}",
                                               r.rank, now - r.lockstep_vain_since, describe_ranks()),
                                   kExitDeadlock);
            return true;
        }
        memory_wait_over(r);
        r.lockstep_wakeup->release();
        ended = true;
    }
    return ended;
}

void stop_simulation()
{
    sg4::Actor::kill_all();
}

}  // namespace

void gate_actor()
{
    Context& ctx = context();
    wire::Doorbell& bell = *ctx.doorbell.object;
    uint32_t bell_seen = bell.count.load();
    double outside_since = -1.0;
    const bool measured = ctx.config.cpu_model != wire::CpuModel::Zero;
    wake_gate_when_time_moves();

    while (true) {
        ++g_sim_activity;
        if (g_terminate_requested.load()) {
            // Asked to stop because the command ended after a rank failed: a rank that the
            // process manager stopped just before says more than the signal does.
            bool a_rank_failed = std::any_of(ctx.registry.ranks().begin(), ctx.registry.ranks().end(), [](auto& r) {
                return r->phase == RankPhase::Finished && r->exit_status != 0;
            });
            for (auto& rank : ctx.registry.ranks())
                if (a_rank_failed && rank->phase != RankPhase::Finished && rank->phase != RankPhase::Dead &&
                    rank_gone(*rank))
                    break;
            ctx.outcome.fail("error",
                             fmt::format("interrupted by a signal at simulated time {:.9f} s{}",
                                         sg4::Engine::get_clock(), describe_ranks()),
                             kExitInterrupted);
        }
        if (ctx.outcome.failed()) return stop_simulation();

        bool all_done = true;
        bool computing = false;
        bool outside = false;
        bool unannounced_outside = false;  // blocked outside, in a wait of its own (a pipe, a socket)
        bool only_memory_waits = true;     // every rank outside waits on its memory
        std::vector<RankRecord*> batch;
        double now = wall_now();
        bool rank_ended = false;  // a process was found gone: the look at the ranks starts over
        observe::progress_tick(now);
        for (auto& rank : ctx.registry.ranks()) {
            RankRecord& r = *rank;
            if (r.phase == RankPhase::Finished || r.phase == RankPhase::Dead) continue;
            all_done = false;
            if (uint32_t aborts = r.slot.object->aborts.load(std::memory_order_acquire); aborts != r.aborts_seen) {
                r.aborts_seen = aborts;
                abort_blocking_wait(r);
            }
            // System calls per rank and iteration are most of the gate's own cost: the
            // socket (death, re-attach after exec) and the CPU clock (blocked outside) are
            // looked at every kQuietCheckInterval of wall time, or less often. A waiting
            // rank's too: its process may end while its request is in the simulation.
            bool check = now - r.checked_wall >= kQuietCheckInterval;
            if (check) {
                r.checked_wall = now;
                if (rank_gone(r)) {
                    rank_ended = true;
                    break;
                }
            }
            // Threads other than the simulated one: park requests, parked timed polls.
            bool other_thread_may_call = look_at_parked_waits(r, now);
            if (r.lockstep) {  // one of its threads runs, or waits for a request of its
                if (posted(r)) {
                    if (!r.in_service) batch.push_back(&r);
                } else if (!r.in_service) {
                    computing = true;
                    check_lockstep_holds(r, now);
                }
                continue;
            }
            if (!running(r)) {  // the simulated thread waits in the simulation
                if (r.simulated_thread_parked && posted(r) && !r.in_service) batch.push_back(&r);  // another thread's
                else if (other_thread_may_call) outside = unannounced_outside = true, only_memory_waits = false;
                continue;
            }
            if (posted(r)) {
                if (!r.in_service) batch.push_back(&r);  // never a request in service a second time
                continue;
            }
            if (r.outside_wait == OutsideWait::Others) {  // announced: no need to guess
                outside = true;
                only_memory_waits = false;
                continue;
            }
            if (r.outside_wait == OutsideWait::Hold) {
                computing = true;
                if (now - r.outside_since_wall > ctx.config.outside_deadlock_timeout)
                    ctx.outcome.fail("deadlock",
                                     fmt::format("rank {} has waited {:.0f} s of wall time outside the simulation, in {}, "
                                                 "which should complete without the other ranks:{}",
                                                 r.rank, now - r.outside_since_wall, r.outside_what, describe_ranks()),
                                     kExitDeadlock);
                continue;
            }
            if (check) update_cpu_progress(r, now);
            if (r.phase == RankPhase::Computing && (r.waits_on_memory || (check && waits_on_memory(r, r.cpu_seen_ns)))) {
                outside = true;  // time runs until the next write into its memory
                continue;
            }
            computing |= r.phase == RankPhase::Computing;
            bool blocked = r.phase == RankPhase::BlockedOutside;
            outside |= blocked;
            unannounced_outside |= blocked;
            only_memory_waits &= !blocked;
        }
        // The look was cut short: what it found of the ranks after the one that ended is
        // missing (a computing rank taken for none let the gate park, and SimGrid report a
        // deadlock).
        if (ctx.outcome.failed() || rank_ended) continue;
        if (all_done) return;

        if (computing) {  // hold time until every computing rank has reported
            outside_since = -1.0;
            if (progress_under_computing_ranks(batch)) continue;
            bell_seen = wait_doorbell(bell, bell_seen, measured ? kHorizonStep : 0.002);
            continue;
        }
        if (!batch.empty()) {
            outside_since = -1.0;
            dispatch(batch);
            sg4::this_actor::yield();
            continue;
        }
        double polls = earliest_poll_deadline();
        if (!outside) {  // every rank waits in the simulation: let time advance
            if (polls < 0) {
                // With nothing under way, only a rank can wake the gate, and the engine
                // reports a deadlock at once: a rank whose process ended since its last
                // look (a thread that called exit while it waited) must be seen first.
                if (!activity_pending() && any_rank_gone()) continue;
                if (!activity_pending() && end_vain_memory_waits(now)) {
                    sg4::this_actor::yield();  // its proxy replies
                    continue;
                }
                // A thread a rank has just started may be on its way to the call a wait
                // waits for: the server has not heard of it yet. A main thread that waited
                // on a counter its new threads were to increment was reported deadlocked
                // at once when they were slow to start (test thread_starts; thread_channel
                // in 2 of 60 runs, six at a time). With something under way, the gate
                // parks until the clock moves rather than for good: when the simulation has
                // nothing left, the engine would report the deadlock before the gate could
                // look again. With nothing under way, it waits in real time, as long as a
                // wait outside the simulation may.
                // Actors ready to run go first: a real-time wait while they could, the
                // whole simulation stopped (a new thread spinning until another thread's
                // put had gone out held the gate in its wait, and the put never went).
                if (waits_for_starting_thread(now)) {
                    if (others_ran_on_yield()) continue;
                    if (activity_pending()) park_until_time_moves();
                    else bell_seen = wait_doorbell(bell, bell_seen, 0.001);
                    continue;
                }
                park_gate();
                continue;
            }
            if (activity_pending()) {
                advance_until(polls);
                continue;
            }
            if (!quiet()) continue;
            end_polls_at_stall(std::min(kVainPollingWindow, ctx.config.outside_deadlock_timeout));
            continue;
        }
        // Some ranks are blocked outside: they do not hold time, but they may come back.
        // The gate waits in simulated time until the next event: it must be the next one
        // indeed. Actors it just made ready (proxies it dispatched to, NIC steps due
        // by them) have not started their activities yet: before they have, the next
        // event seen could be an E2E retry deadline 10 s on, of a message whose ACK they
        // were about to bring. The gate then slept until that date, the ACK came
        // meanwhile, and with nothing else to do the engine ran the clock to the gate's
        // wake-up. A rank whose simulated thread waits outside while its other threads
        // call Portals (SOS's threaded tests join their threads) went from one such jump
        // to the next: hundreds or thousands of simulated seconds, by multiples of the
        // retry timeout, for a run of 200 us.
        if (others_ran_on_yield()) continue;
        double next = next_event_delay();
        if (next >= 0) {
            advance_to_next_event(next);
            sg4::this_actor::yield();
            continue;
        }
        if (!quiet()) continue;
        if (earliest_poll_deadline() >= 0) {  // the ranks outside may be waiting for the polling ones
            // Ranks in an announced fence wait for the polling ones to enter it, which
            // vain polls do not bring nearer: as good as every rank polling in vain.
            end_polls_at_stall(unannounced_outside ? ctx.config.outside_deadlock_timeout
                                                   : std::min(kVainPollingWindow, ctx.config.outside_deadlock_timeout));
            continue;
        }
        // The simulation is quiet; only the blocked-outside ranks can move things. Ranks
        // that wait on their memory with nothing on its way to them are as good as
        // polling in vain.
        if (outside_since < 0) outside_since = now;
        double window = only_memory_waits ? std::min(kVainPollingWindow, ctx.config.outside_deadlock_timeout)
                                          : ctx.config.outside_deadlock_timeout;
        if (now - outside_since > window) {
            ctx.outcome.fail("deadlock",
                             fmt::format("no progress for {:.0f} s of wall time: every rank waits in the simulation "
                                         "except ranks {} it:{}",
                                         window, only_memory_waits ? "waiting on their memory outside" : "blocked outside",
                                         describe_ranks()),
                             kExitDeadlock);
            continue;
        }
        bell_seen = wait_doorbell(bell, bell_seen, 0.005);
    }
}

void wake_gate_for_poll()
{
    if (g_gate_wakes_at < 0) return;
    g_gate_wakes_at = -1.0;  // one wake is enough: the gate looks at every poll when it runs
    context().gate_wakeup->release();
}

void wake_gate_for_withdrawn_event()
{
    // Released at once from the actor that withdrew the event (a simcall, handled in this
    // scheduling round). Not through a timer at the current date: its firing was one more
    // round of the engine's models at that date, whenever the gate happened to wait, and
    // simulated dates then differed in their last digits from run to run.
    wake_gate_waiting_for_next_event();
}

void report_deadlock()
{
    context().outcome.fail("deadlock",
                           fmt::format("deadlock at simulated time {:.9f} s: no rank can progress{}",
                                       sg4::Engine::get_clock(), describe_ranks()),
                           kExitDeadlock);
}

}  // namespace s4bxi::sim
