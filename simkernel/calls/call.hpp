// Private to calls/: what the files of the Portals engine share. A Call serves one
// request of a rank (its methods live in portals_engine.cpp for NIs, tables and MDs,
// list_calls.cpp for MEs/LEs and unexpected headers, event_calls.cpp for event queues and
// counters, data_calls.cpp for Put, Get, atomics and triggered operations); the polling
// steps; the list helpers other files call.
#pragma once

#include <portals4.h>

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <simgrid/Exception.hpp>
#include <simgrid/s4u.hpp>

#include "calls/portals_engine.hpp"
#include "nic/nic_model.hpp"
#include "run/registry.hpp"
#include "run/scheduling_hooks.hpp"
#include "s4bxi/poll_work.hpp"

namespace s4bxi::sim::engine {

namespace sg4 = simgrid::s4u;

// Fast-forward steps of empty polls. An event ends the step at once, so they only bound the
// error for progress made outside Portals (a flag in shared memory, a socket). The first
// step is about an MPI round trip over BXI (3.5 us): a wait for a SEND, an ACK or the
// peer's answer ends with its arrival in one poll, where a first step of 500 ns took two
// or three (a third more requests in an MPI ping-pong, the same simulated times). A fast
// growth keeps longer waits to a few requests.
constexpr double kPollQuantumStart = 4e-6;
constexpr double kPollQuantumGrowth = 4.0;
constexpr double kPollQuantumMax = 1e-4;
// Past the maximum, a step is this fraction of the time the rank has already spent polling
// in vain: a wait of any length costs a few tens of requests (the wall time of a blocked
// MPI_Recv does not grow with its simulated length), and progress made outside Portals is
// seen late by at most this fraction of the wait.
constexpr double kPollIdleFraction = 0.25;
// Past this much simulated time polling in vain, the step stops growing: steps that grow
// with the idle time would otherwise run the clock to infinity (and SimGrid to an abort)
// in a program that polls while something else keeps the simulation busy for ever.
constexpr double kPollIdleLimit = 1e5;


extern std::vector<std::unique_ptr<RankPortals>> g_portals;
extern int g_polls_in_progress;  // proxies waiting in an empty poll (PollInProgress)
extern std::map<std::pair<uint32_t, uint32_t>, RankPortals*> g_pids;  // (nid, pid) -> owner

// A poll found work (an event, a new counter value): the fast-forward of the next empty
// one starts afresh.
void poll_found_work(RankPortals& p);
// When the rank last read its event queues (RankPortals::events_looked): in its mirror,
// which its local reads update too, if it has one.
uint64_t events_looked(const RankPortals& p);
void set_events_looked(RankPortals& p, uint64_t events);

// The trigger of a PtlTriggeredMEAppend fired: the entry is linked at this instant, and
// its events are written by an actor of the NIC.
void append_triggered(RankPortals& owner, const ListEntryPtr& entry);

class Call {
public:
    Call(RankRecord& rank, const wire::Request& request, wire::Reply& reply)
        : r_(rank), p_(*rank.portals), request_(request), reply_(reply), ticket_(rank.serving),
          aborts_at_start_(rank.portals->aborts)
    {
    }

    int run();

private:
    template <class T>
    const T& args() const
    {
        return wire::args_as<T>(request_.args);
    }
    template <class T>
    T& out()
    {
        return wire::args_as<T>(reply_.args);
    }

    Nic& nic() { return nic_model().nic(p_.nid); }
    // What writing a command to the NIC costs the calling rank: its PCIe write, or the flow
    // model's flat cost (the model of a call made now).
    void management_command()
    {
        if (switches_now().pci_commands)
            pci_transfer(nic().cpu0(), nic().hosts().nic, nic_model().timings().command_size, trace::Op::PCI_COMMAND,
                         p_.nid)
                .run_in_actor();
        else flow_command();
    }
    void flow_command()
    {
        const PlatformSpec& spec = nic_model().spec();
        if (spec.flow_command_time > 0 && nic_model().models().current() == netmodel::Model::Flow)
            simgrid::s4u::this_actor::sleep_for(spec.flow_command_time);
    }

    NetworkInterface* ni(uint32_t handle)
    {
        if (handle_kind(handle) != HandleKind::NI || handle_index(handle) >= 4) return nullptr;
        NetworkInterface& n = p_.nis[handle_index(handle)];
        return n.used ? &n : nullptr;
    }
    template <class T>
    T* object(std::vector<T>& pool, HandleKind kind, uint32_t handle)
    {
        if (handle_kind(handle) != kind || handle_index(handle) >= pool.size()) return nullptr;
        T& o = pool[handle_index(handle)];
        return o.used ? &o : nullptr;
    }
    EventQueue* eq(uint32_t handle) { return object(p_.eqs, HandleKind::EQ, handle); }
    Counter* ct(uint32_t handle) { return object(p_.cts, HandleKind::CT, handle); }
    MemoryDescriptor* md(uint32_t handle) { return object(p_.mds, HandleKind::MD, handle); }
    // The ME or LE behind a handle, linked or waiting for its triggered append; null if none.
    ListEntryPtr list_entry(uint32_t handle)
    {
        HandleKind kind = handle_kind(handle);
        uint32_t index = handle_index(handle);
        if ((kind != HandleKind::ME && kind != HandleKind::LE) || index >= p_.entries.size()) return nullptr;
        const ListEntryPtr& e = p_.entries[index];
        return e && e->handle == handle ? e : nullptr;
    }
    bool eq_or_none(uint32_t handle, uint32_t ni_index)
    {
        EventQueue* q = handle == PTL_EQ_NONE ? nullptr : eq(handle);
        return handle == PTL_EQ_NONE || (q && q->ni == ni_index);
    }
    bool ct_or_none(uint32_t handle, uint32_t ni_index)
    {
        Counter* c = handle == PTL_CT_NONE ? nullptr : ct(handle);
        return handle == PTL_CT_NONE || (c && c->ni == ni_index);
    }
    template <class T>
    uint32_t allocate(std::vector<T>& pool, HandleKind kind, int limit)
    {
        for (uint32_t i = 0; i < pool.size(); ++i)
            if (!pool[i].used) return make_handle(kind, i);
        if (static_cast<int>(pool.size()) >= limit) return PTL_INVALID_HANDLE;
        pool.emplace_back();
        return make_handle(kind, static_cast<uint32_t>(pool.size() - 1));
    }

    // Waits for the NIC to change something of this rank, until `deadline` (< 0: none).
    // The caller holds `lock` since before it checked its condition: taking the mutex is
    // a simcall, during which the NIC could change the state and notify before this
    // proxy is registered as a waiter, and the wake-up would be lost.
    // Returns true when PtlAbort interrupted the wait.
    bool wait_for_activity(std::unique_lock<sg4::Mutex>& lock, double deadline)
    {
        try {
            return wait_for_activity_unguarded(lock, deadline);
        } catch (const simgrid::ForcefulKillException&) {
            // Killed here (its rank died, or its machine was lost): a dying actor's simcall
            // throws again, and the lock's destructor would unlock by a simcall, from a
            // destructor, which ends the server (terminate). The mutex was given up for the
            // wait and not taken back; the actor and its rank are gone.
            (void)lock.release();
            throw;
        }
    }

    bool wait_for_activity_unguarded(std::unique_lock<sg4::Mutex>& lock, double deadline)
    {
        if (ticket_ && !ticket_->parked) {
            g_scheduling_hooks.park_if_needed(r_, request_, *ticket_);
            // Parking is simcalls (the next proxy's creation, the gate's wake-up), during
            // which other actors ran: the NIC may have written the count or the event this
            // wait waits for, and notified before this proxy waited. The caller looks at
            // its condition again before it waits. Without this, a parked PtlCTWait whose
            // counter had reached its test waited for ever (SOS's mt_membar: the counter
            // at 214, the fence's wait for 214 never answered).
            if (ticket_->parked) return p_.aborts != aborts_at_start_;
        }
        // A parked wait is no poll: p_.waiting tells the gate that a poll's proxy is in its wait.
        const bool parked = ticket_ && ticket_->parked;
        // The wait's timeout exists once the engine has handled the wait, after this
        // actor yields: a gate that ran in the same round must look again.
        if (!parked) p_.waiting = true;
        ++g_sim_activity;
        if (deadline < 0) p_.activity->wait(lock);
        else if (deadline > sg4::Engine::get_clock()) p_.activity->wait_until(lock, deadline);
        if (!parked) p_.waiting = false;
        return p_.aborts != aborts_at_start_;
    }

    // Another thread's timed poll: its timeout runs in real time, as that thread's clock
    // does (docs/design.md "Time"), and the gate ends it (parked_waits.hpp). Returns the
    // simulated deadline the wait keeps itself: none then.
    double poll_deadline(uint32_t timeout_ms)
    {
        if (timeout_ms == PTL_TIME_FOREVER) return -1.0;
        if (request_.other_thread && ticket_) {
            ticket_->wall_timeout = timeout_ms * 1e-3;
            return -1.0;
        }
        return sg4::Engine::get_clock() + timeout_ms * 1e-3;
    }
    bool timed_out(double deadline) const
    {
        if (ticket_ && ticket_->parked && r_.parked[ticket_->index].timed_out) return true;
        return deadline >= 0 && sg4::Engine::get_clock() >= deadline;
    }

    // First visible event of the queue, if any; otherwise the date it will be visible.
    bool take_event(EventQueue& q, ptl_event_t& event, double& next_visible)
    {
        next_visible = -1;
        const TimedEvent* front = q.front();
        if (!front) return false;
        if (front->visible_at > sg4::Engine::get_clock()) {
            next_visible = front->visible_at;
            return false;
        }
        event = front->event;
        q.pop_front();
        return true;
    }

    // The fast-forward of an empty poll: until `deadline`, or until something arrives for
    // the rank in any queue (the polling loop would notice it on its next round). The
    // deadline is no simulated timeout of the proxy's: the gate keeps it (PollInProgress),
    // and ends the poll there, or at once when nothing else is left to happen in the
    // simulation (end_polls).
    struct EmptyPoll {
        double deadline;
        uint64_t arrivals;
        double first_pending_visible;  // an event queued before the poll, not visible yet (-1: none)
    };

    EmptyPoll begin_empty_poll()
    {
        double now = sg4::Engine::get_clock();
        if (p_.idle_since < 0) p_.idle_since = now;
        double idle = std::min(now - p_.idle_since, kPollIdleLimit);
        // An event queued before the poll but visible only later (its write to the host is
        // under way) ends it when it becomes visible, as one that arrives during it would:
        // the loop would see it on its next round, whichever of the rank's queues holds it.
        double pending = -1.0;
        for (const EventQueue& q : p_.eqs) {
            double first = q.used ? q.first_visible_after(now) : -1.0;
            if (first >= 0 && (pending < 0 || first < pending)) pending = first;
        }
        return {now + std::max(p_.poll_quantum, kPollIdleFraction * idle), p_.arrivals, pending};
    }

    // While the proxy waits in an empty poll, the gate knows its deadline.
    class PollInProgress {
    public:
        PollInProgress(RankPortals& p, double deadline) : p_(p)
        {
            p_.poll_until = deadline;
            p_.poll_ended = false;
            ++g_polls_in_progress;
            g_scheduling_hooks.wake_gate_for_poll();
        }
        ~PollInProgress()
        {
            p_.poll_until = -1.0;
            --g_polls_in_progress;
        }
        PollInProgress(const PollInProgress&) = delete;
        PollInProgress& operator=(const PollInProgress&) = delete;
        bool ended() const { return p_.poll_ended; }

    private:
        RankPortals& p_;
    };

    // True when something arrived for the rank since the poll began and is visible now;
    // otherwise shortens `until` to when it will be.
    bool arrival_visible(const EmptyPoll& poll, double& until) const
    {
        double now = sg4::Engine::get_clock();
        if (poll.first_pending_visible >= 0) {
            if (poll.first_pending_visible <= now) return true;
            if (until < 0 || poll.first_pending_visible < until) until = poll.first_pending_visible;
        }
        if (p_.arrivals == poll.arrivals) return false;
        if (p_.last_arrival_visible_at <= now) return true;
        if (until < 0 || p_.last_arrival_visible_at < until) until = p_.last_arrival_visible_at;
        return false;
    }

    // An event the rank has not looked at yet (written since it last read its queues, by
    // a call of its own such as a PtlMEAppend that found an unexpected message, or by the
    // NIC) is visible: its polling loop will find it on its next round.
    bool unseen_event_visible() const
    {
        return p_.events != events_looked(p_) && p_.last_event_visible_at <= sg4::Engine::get_clock();
    }

    void poll_found_work() { engine::poll_found_work(p_); }

    // `vain`: the poll counts towards the deadlock check (all ranks polling in vain for
    // kVainPollingWindow). A search that found nothing does not: it costs simulated time
    // of its own (its SEARCH event's PCIe write), and a program may wait for time to pass
    // in a probing loop.
    void poll_found_nothing(bool vain = true)
    {
        if (vain) ++g_vain_polls;
        p_.poll_quantum = std::min(p_.poll_quantum * kPollQuantumGrowth, kPollQuantumMax);
        p_.probing = true;
    }

    // The fast-forward of a call that waits as an empty poll does (a search in a probing
    // loop): until a step passes, something arrives for the rank, or the gate ends it at a
    // stall. Returns true when something arrived.
    bool fast_forward(const EmptyPoll& poll)
    {
        PollInProgress in_poll(p_, poll.deadline);
        std::unique_lock lock(*p_.mutex);
        while (!in_poll.ended()) {
            double until = -1.0;
            if (arrival_visible(poll, until)) return true;
            wait_for_activity(lock, until);
        }
        return false;
    }

    int finish_event(EventQueue& q, const ptl_event_t& event, uint32_t which)
    {
        auto& reply = out<wire::EventReply>();
        reply.which = which;
        static_assert(sizeof(ptl_event_t) == wire::kEventBytes);
        std::memcpy(reply.event, &event, sizeof event);
        if (is_work(event)) poll_found_work();
        return q.take_dropped() ? PTL_EQ_DROPPED : PTL_OK;
    }

    int ni_init();
    int ni_fini();
    int pt_alloc();
    int pt_free();
    int pt_enable(bool enable);
    bool too_many_iovecs(const char* call, uint64_t entries, uint32_t limit) const;
    int md_bind();
    int md_release();
    int me_append();
    int me_unlink();
    int me_search();
    int set_map();
    int get_map();
    int ni_handle();
    int new_entry(const wire::MEAppendArgs& a, ListEntryPtr& out);
    bool chosen_handle_free(uint32_t handle, HandleKind kind) const;
    uint32_t server_entry_index() const;
    int eq_alloc();
    int eq_free();
    int wait_events(const uint32_t* handles, uint32_t count, uint32_t timeout_ms, const char* what);
    int eq_get(bool wait);
    int eq_poll();
    int ct_alloc();
    int ct_free();
    int ct_get();
    int ct_wait();
    int ct_poll();
    int ct_update(bool set);
    int get_id(bool physical);
    int prepare(MessageType kind, bool swap, const wire::FetchArgs& f, TransferPtr& out);
    wire::FetchArgs fetch_args(MessageType kind) const;
    int data(MessageType kind, bool swap = false);
    int triggered();
    int cancel_triggered();

    RankRecord& r_;
    RankPortals& p_;
    const wire::Request& request_;
    wire::Reply& reply_;
    ParkTicket* ticket_;  // of the proxy serving the request (parked_waits.hpp)
    uint64_t aborts_at_start_;  // RankPortals::aborts when the call began: a later one interrupts its wait
};

}  // namespace s4bxi::sim::engine
