#include "scheduling/rank_proxy.hpp"

#include <portals4.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <simgrid/s4u.hpp>

#include "calls/portals_engine.hpp"
#include "nic/nic_model.hpp"
#include "nic/trace.hpp"
#include "observation/timeline.hpp"
#include "registration/machine_link.hpp"
#include "run/context.hpp"
#include "s4bxi/slot_futex.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/memory_waits.hpp"
#include "scheduling/parked_waits.hpp"
#include "scheduling/thread_hold.hpp"
#include "services/outside_wait_service.hpp"
#include "services/pmi_service.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_proxy, "Rank proxies");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

constexpr double kLongestSleep = 1e9;  // seconds; longer requests are malformed

// Returns when the computation ended (its start, the rank's last reply, if none).
double inject_compute(RankRecord& r, uint64_t cpu_ns)
{
    const Config& config = context().config;
    if (config.cpu_model == wire::CpuModel::Zero) return r.slot.object->sim_time_at_reply();
    double seconds = static_cast<double>(cpu_ns) * 1e-9 * config.cpu_factor;
    if (seconds < config.cpu_threshold || seconds <= 0) return r.slot.object->sim_time_at_reply();
    // The computation began at the rank's last reply. Simulated time may have moved on
    // since, up to what the rank had surely computed by then (the gate's horizon): only
    // the rest is still to pass.
    double start = r.slot.object->sim_time_at_reply();
    double end = start + seconds;
    double now = sg4::Engine::get_clock();
    // A core of its own: the computation ends at `end` whatever it does, and a sleep costs
    // the engine less than an execution (no action of the CPU model to share and update),
    // which the busy polling loops of MPI pay at every request. A core shared with other
    // ranks (--ppn above the cores per node) divides its speed among their executions.
    if (end > now) {
        if (r.core_to_itself) sg4::this_actor::sleep_until(end);
        else sg4::this_actor::execute((end - now) * sg4::this_actor::get_host()->get_speed());
    }
    r.compute_time += seconds;
    if (trace::enabled()) trace::record(trace::Op::COMPUTE, r.nid, r.nid, start, sg4::Engine::get_clock());
    return end;
}

// Returns true when the rank has finished.
bool serve(RankRecord& r, const wire::Request& request, wire::Reply& reply)
{
    auto op = static_cast<wire::Op>(request.op);
    switch (op) {
    case wire::Op::Finalize: {
        const auto& args = wire::args_as<wire::FinalizeArgs>(request.args);
        r.exit_status = args.exit_status;
        r.end_time = sg4::Engine::get_clock();
        if (context().config.cpu_model != wire::CpuModel::Zero)
            r.mpi_library_time = static_cast<double>(args.mpi_library_ns) * 1e-9 * context().config.cpu_factor;
        kill_parked_waits(r);  // threads still in a wait end with the process
        set_lockstep(r, false);  // its writes need no counting any more
        if (r.portals) capture_pending_payloads(*r.portals);
        // The process is still there, waiting for this reply: its peak is as good as final.
        r.peak_resident_bytes = r.process().peak_resident_bytes(r.pid);
        r.involuntary_switches = r.process().involuntary_switches(r.pid, r.tid);
        return true;
    }
    case wire::Op::Sleep: {
        double seconds = wire::args_as<wire::SleepArgs>(request.args).seconds;
        if (!std::isfinite(seconds) || seconds < 0 || seconds > kLongestSleep) {
            reply.rc = -1;
            XBT_WARN("rank %d: malformed sleep request (%g s) rejected", r.rank, seconds);
            return false;
        }
        r.waiting_on.set([seconds] { return fmt::format("a sleep of {} s", seconds); });
        sg4::this_actor::sleep_for(seconds);
        r.sleep_time += seconds;
        return false;
    }
    case wire::Op::Yield: return false;
    case wire::Op::PmiAbort: {
        const auto& a = wire::args_as<wire::AbortArgs>(request.args);
        std::string text(a.text, strnlen(a.text, std::min<size_t>(a.length, sizeof a.text)));
        r.exit_status = a.exit_status;
        r.end_time = sg4::Engine::get_clock();
        Outcome& outcome = context().outcome;
        outcome.fail("abort",
                     fmt::format("rank {} (pid {}, {}) called PMI_Abort({}, \"{}\") at simulated time {:.9f} s; the "
                                 "other ranks were stopped",
                                 r.rank, r.pid, r.node_name, a.exit_status, text, r.end_time),
                     kExitRankAbort);
        if (outcome.status == "abort") outcome.abort_status = a.exit_status & 0xff;
        return false;
    }
    case wire::Op::CallRecords: return false;  // drained at dispatch
    case wire::Op::Pcontrol:
        // Every rank registered before the simulation began, and only ranks 0 .. world-1
        // may: a rank's world rank is its index in the run, the registry's size the count.
        nic_model().models().pcontrol(static_cast<uint32_t>(r.rank), static_cast<uint32_t>(context().registry.size()),
                                      wire::args_as<wire::PcontrolArgs>(request.args).level);
        return false;
    case wire::Op::LockstepIdle: {
        const auto& args = wire::args_as<wire::LockstepIdleArgs>(request.args);
        ++r.host_decisions.lockstep_idles;
        if (!r.lockstep_wakeup) r.lockstep_wakeup = sg4::Semaphore::create(0);
        r.waiting_on.set([on_memory = args.on_memory] {
            return std::string(on_memory ? "its memory and the waits of its threads (lockstep)"
                                         : "the waits of its threads (lockstep)");
        });
        // A write that landed since the rank's last reply may be what a thread spins for:
        // the reply tells it at once.
        if (args.on_memory && r.memory_writes > args.known_writes) return false;
        if (args.on_memory) lockstep_threads_wait_on_memory(r);
        r.lockstep_idle = true;
        while (r.lockstep_done <= args.known_done && (!args.on_memory || r.waits_on_memory))
            r.lockstep_wakeup->acquire();
        r.lockstep_idle = false;
        memory_wait_over(r);
        return false;
    }
    case wire::Op::OutsideWait:
        reply.rc = announce_outside_wait(r, wire::args_as<wire::OutsideWaitArgs>(request.args));
        return false;
    case wire::Op::Backtrace: {
        const auto& text = wire::args_as<wire::TextArgs>(request.args);
        std::string report(text.text, strnlen(text.text, std::min<size_t>(text.length, sizeof text.text)));
        if (report.rfind("signal=", 0) == 0) {
            r.crash_signal = std::atoi(report.c_str() + 7);
            report = report.substr(std::min(report.size(), report.find('\n') + 1));
        }
        r.crash_report = report;
        return false;
    }
    default:
        if (is_pmi_request(request.op)) {
            reply.rc = serve_pmi(r, request, reply);
            return false;
        }
        if (request.op >= static_cast<uint32_t>(wire::Op::PtlInit) && request.op < static_cast<uint32_t>(wire::Op::Count)) {
            double start = sg4::Engine::get_clock();
            try {
                reply.rc = serve_portals(r, request, reply);
            } catch (const simgrid::NetworkFailureException&) {
                // The node's own PCIe link is down (a failure what-if): the NIC never
                // got the command.
                XBT_INFO("rank %d: a command was lost on a PCIe link that is down", r.rank);
                reply.rc = PTL_FAIL;
            }
            r.portals_time += sg4::Engine::get_clock() - start;
            return false;
        }
        XBT_WARN("rank %d: malformed request (operation %u) rejected", r.rank, request.op);
        reply.rc = -1;
        return false;
    }
}

const char* posted_call_name(const wire::Request& request)
{
    switch (static_cast<wire::Op>(request.op)) {
    case wire::Op::PtlPut: return "PtlPut";
    case wire::Op::PtlGet: return "PtlGet";
    case wire::Op::PtlAtomic: return "PtlAtomic";
    case wire::Op::PtlFetchAtomic: return "PtlFetchAtomic";
    case wire::Op::PtlSwap: return "PtlSwap";
    case wire::Op::PtlCTInc: return "PtlCTInc";
    case wire::Op::PtlCTSet: return "PtlCTSet";
    case wire::Op::PtlTriggered: return "triggered operation";
    case wire::Op::PtlMEAppend: return wire::args_as<wire::MEAppendArgs>(request.args).is_le ? "PtlLEAppend" : "PtlMEAppend";
    default: return "command";
    }
}

// A posted command (wire::PostedCommand) was served: the rank goes on from its end, as
// after a reply, but the rank has not waited for one. Its clock and its mirror's count of
// replies move as a reply would move them; the rank reads them once it has seen
// posted_served reach what it posted (libinterpose/channel/channel_client.cpp, catch_up()).
void finish_posted_command(RankRecord& r, const wire::Reply& reply)
{
    r.serving_posted = false;
    ++r.posted_served;
    // The rank checked the arguments the server would reject; what it cannot know (a PCIe
    // link that a failure what-if took down) has no caller to return to.
    if (reply.rc != PTL_OK)
        XBT_WARN("rank %d: a posted %s failed with %d at %.9f s; the program was told PTL_OK", r.rank,
                 posted_call_name(r.request), reply.rc, sg4::Engine::get_clock());
    r.phase = RankPhase::Computing;
    r.asleep_since_wall = -1.0;
    wire::Slot& slot = *r.slot.object;
    double date = sg4::Engine::get_clock();
    uint64_t bits;
    std::memcpy(&bits, &date, sizeof bits);
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_release);
    mark_reply(r);
    slot.posted_served.store(r.posted_taken, std::memory_order_seq_cst);
    if (slot.posted_sleepers.load(std::memory_order_seq_cst) != 0) futex(&slot.posted_served, FUTEX_WAKE, INT_MAX, nullptr);
    publish_to_machine(r);
}

}  // namespace

void rank_proxy(RankRecord* rank)
{
    RankRecord& r = *rank;
    Context& ctx = context();
    while (true) {
        r.dispatch->acquire();
        ++g_sim_activity;
        const wire::Request request = r.request;
        learn_local_reads(r);
        double compute_start = r.slot.object->sim_time_at_reply();
        observe::request_dispatched(r, request, compute_start, inject_compute(r, request.cpu_ns));
        // The reply is written here, and copied to the slot when it is given: a parked
        // wait answers later, while the slot serves the rank's other threads.
        wire::Reply reply;
        std::memset(&reply, 0, sizeof reply);
        reply.seq = request.seq;
        ParkTicket ticket;
        r.serving = &ticket;
        uint64_t work_before = r.portals ? r.portals->work_found : 0;
        bool finished = serve(r, request, reply);
        observe::request_served(r, request, reply.rc, finished);
        ++g_requests_served;
        reply.sim_time = sg4::Engine::get_clock();
        if (ticket.parked) {
            // This actor was the wait's own since it parked; a new proxy serves the rank.
            finish_parked_wait(r, request, reply, ticket);
            return;
        }
        r.serving = nullptr;
        r.in_service = false;
        r.park_requested = false;  // the wait it asked to park is over
        r.waiting_on.clear();
        if (r.serving_posted) {
            finish_posted_command(r, reply);
            ctx.gate_wakeup->release();
            continue;
        }
        if (finished) {
            r.phase = RankPhase::Finished;
        } else if (request.other_thread) {
            // The simulated thread was not in this call: it goes on as it was.
            r.phase = r.phase_before_dispatch;
            hold_after_request(r, request, r.portals && r.portals->work_found != work_before);
        } else {
            r.phase = RankPhase::Computing;
            r.asleep_since_wall = -1.0;
            memory_budget_restarts(r);
        }
        reply.lockstep_done = r.lockstep_done;
        reply.memory_writes = r.memory_writes;
        wire::Reply& slot_reply = r.slot.object->reply;
        std::memcpy(&slot_reply, &reply, sizeof reply);
        mark_reply(r);
        publish_reply(*r.slot.object);
        publish_to_machine(r);
        ctx.gate_wakeup->release();
        if (finished) return;
    }
}

}  // namespace s4bxi::sim
