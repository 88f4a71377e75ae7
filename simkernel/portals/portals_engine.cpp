#include "portals/portals_engine.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "nic/nic_model.hpp"
#include "portals/atomics.hpp"
#include "s4bxi/poll_work.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/registry.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_portals, "The Portals 4 engine");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

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
constexpr uint32_t kFirstAutomaticPid = 2048;

std::vector<std::unique_ptr<RankPortals>> g_portals;
int g_polls_in_progress = 0;  // proxies waiting in an empty poll (PollInProgress)
std::map<std::pair<uint32_t, uint32_t>, RankPortals*> g_pids;  // (nid, pid) -> owner

// Appendix §4.3: defaults when nothing is asked, caps otherwise (a desired 0 gets the cap).
// Both are parameters of the platform: nic.limits.* and nic.limit_caps.* (NiLimits).
ptl_ni_limits_t reported(const NiLimits& limits)
{
    ptl_ni_limits_t l{};
    for_each_ni_limit([](const char*, auto& out, auto value) { out = static_cast<std::decay_t<decltype(out)>>(value); },
                      l, limits);
    l.features = PTL_TARGET_BIND_INACCESSIBLE | PTL_TOTAL_DATA_ORDERING | PTL_COHERENT_ATOMICS;
    return l;
}

ptl_ni_limits_t default_limits()
{
    return reported(nic_model().spec().ni_limits);
}

ptl_ni_limits_t limit_caps()
{
    return reported(nic_model().spec().ni_limit_caps);
}

ptl_ni_limits_t negotiate(const ptl_ni_limits_t& desired)
{
    ptl_ni_limits_t out = limit_caps();
    for_each_ni_limit([](const char*, auto& cap, auto want) { if (want > 0 && want < cap) cap = want; }, out, desired);
    out.features = desired.features;
    return out;
}

EntryCriteria criteria_of(const wire::MEAppendArgs& a, const NetworkInterface& n)
{
    EntryCriteria c;
    c.matching = !a.is_le;
    c.options = a.options;
    c.length = a.length;
    c.match_bits = a.match_bits;
    c.ignore_bits = a.ignore_bits;
    ptl_process_t match_id;
    std::memcpy(&match_id, &a.match_id, sizeof match_id);
    c.logical = n.options & PTL_NI_LOGICAL;
    c.match_nid = match_id.phys.nid;
    c.match_pid = match_id.phys.pid;
    c.match_rank = match_id.rank;
    return c;
}

// A poll found work (an event, a new counter value): the fast-forward of the next empty
// one starts afresh.
void poll_found_work(RankPortals& p)
{
    p.poll_quantum = kPollQuantumStart;
    p.idle_since = -1.0;
    p.probing = false;
}

// When the rank last read its event queues (RankPortals::events_looked): in its mirror,
// which its local reads update too, if it has one.
uint64_t events_looked(const RankPortals& p)
{
    return p.mirror ? p.mirror->events_looked.load(std::memory_order_relaxed) : p.events_looked;
}

void set_events_looked(RankPortals& p, uint64_t events)
{
    p.events_looked = events;
    if (p.mirror) p.mirror->events_looked.store(events, std::memory_order_relaxed);
}

// The entry's handle slot, if it still holds this entry, becomes free.
void release_handle(RankPortals& owner, const ListEntryPtr& entry)
{
    uint32_t index = handle_index(entry->handle);
    if (index < owner.entries.size() && owner.entries[index] == entry) owner.entries[index].reset();
}

// Unexpected headers taken off a list, and the overflow entries that gave them.
struct TakenHeaders {
    std::vector<ptl_event_t> events;
    std::vector<ListEntryPtr> released;
};

// Unexpected headers matching `entry`, as the events they will become (with `user_ptr`):
// overflow events when `claim`, and then they leave the list; SEARCH events without
// `claim` (PtlMESearch with PTL_SEARCH_ONLY), and they stay. A use-once entry takes only
// the first; a persistent one gets an event for every match, searches included. Nothing
// here waits in simulated time.
TakenHeaders take_unexpected(PortalTableEntry& pt, const ListEntry& entry, uint64_t user_ptr, bool claim)
{
    TakenHeaders taken;
    for (auto it = pt.unexpected.begin(); it != pt.unexpected.end();) {
        if (!criteria_match(entry.criteria, it->source)) {
            ++it;
            continue;
        }
        ptl_event_t event = it->event;
        event.user_ptr = reinterpret_cast<void*>(user_ptr);
        if (!claim) event.type = PTL_EVENT_SEARCH;
        taken.events.push_back(event);
        if (claim) {
            if (it->from) {
                --it->from->headers;
                taken.released.push_back(it->from);
            }
            it = pt.unexpected.erase(it);
        } else {
            ++it;
        }
        if (entry.criteria.options & PTL_ME_USE_ONCE) break;
    }
    return taken;
}

// Counts and writes the events of headers taken by take_unexpected, then frees the
// overflow entries that gave their last header. Writing an event waits in simulated
// time, during which the NIC may deliver other messages.
void report_unexpected(Nic& nic, RankPortals& owner, const TakenHeaders& taken, const ListEntry& entry, uint32_t eq,
                       bool claim)
{
    NetworkInterface& owner_ni = owner.nis[entry.ni];
    for (const ptl_event_t& event : taken.events) {
        if (!claim) {
            write_event(nic, owner, eq, event);
            continue;
        }
        if ((entry.criteria.options & PTL_ME_EVENT_CT_OVERFLOW) && entry.ct != PTL_CT_NONE)
            count_event(owner, entry.ct, (entry.criteria.options & PTL_ME_EVENT_CT_BYTES) ? event.mlength : 1, 0);
        if (!(entry.criteria.options & PTL_ME_EVENT_OVER_DISABLE)) write_event(nic, owner, eq, event);
    }
    for (const ListEntryPtr& from : taken.released) auto_free_if_due(nic, owner, owner_ni, *from);
}

// Links a new entry at this instant: a priority entry first claims the unexpected
// headers it matches; a use-once entry consumed that way is never linked. Claiming and
// linking happen at one instant: a message arriving while the claimed headers' events are
// written must find the entry linked, not fall into the overflow list behind the search
// (a header lost that way left coll/portals4's barrier waiting forever). Nothing here
// waits; report_link() writes the events afterwards.
struct Linked {
    TakenHeaders claimed;
    bool consumed = false;
};

Linked claim_and_link(RankPortals& owner, const ListEntryPtr& entry)
{
    PortalTableEntry& pt = owner.nis[entry->ni].table[entry->pt_index];
    Linked linked;
    if (entry->list == PTL_PRIORITY_LIST) linked.claimed = take_unexpected(pt, *entry, entry->user_ptr, true);
    linked.consumed = !linked.claimed.events.empty() && (entry->criteria.options & PTL_ME_USE_ONCE);
    if (linked.consumed) {
        entry->linked = false;
        release_handle(owner, entry);
    } else {
        entry->linked = true;
        (entry->list == PTL_PRIORITY_LIST ? pt.priority : pt.overflow).push_back(entry);
    }
    return linked;
}

// The events of a link: the claimed headers' overflow events, then LINK, or, for a
// use-once entry consumed at once, the specification's PTL_EVENT_AUTO_UNLINK. Waits in
// simulated time.
void report_link(Nic& nic, RankPortals& owner, const ListEntryPtr& entry, const Linked& linked)
{
    NetworkInterface& n = owner.nis[entry->ni];
    uint32_t options = entry->criteria.options;
    report_unexpected(nic, owner, linked.claimed, *entry, n.table[entry->pt_index].eq, true);
    if (linked.consumed) {
        if (!(options & (PTL_ME_EVENT_UNLINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE)))
            write_entry_event(nic, owner, n, *entry, PTL_EVENT_AUTO_UNLINK);
        return;
    }
    if (!(options & PTL_ME_EVENT_LINK_DISABLE)) write_entry_event(nic, owner, n, *entry, PTL_EVENT_LINK);
}

// The trigger of a PtlTriggeredMEAppend fired: the entry is linked at this instant, and
// its events are written by an actor of the NIC (triggers fire inside other operations,
// which must not wait for them).
void append_triggered(RankPortals& owner, const ListEntryPtr& entry)
{
    if (!entry->pending_append) return;  // unlinked meanwhile
    entry->pending_append = false;
    Linked linked = claim_and_link(owner, entry);
    Nic& nic = nic_model().nic(owner.nid);
    RankPortals* rank = &owner;
    sg4::Actor::create("triggered-append", nic.hosts().nic,
                       [&nic, rank, entry, linked] { report_link(nic, *rank, entry, linked); });
}

class Call {
public:
    Call(RankRecord& rank, const wire::Request& request, wire::Reply& reply)
        : r_(rank), p_(*rank.portals), request_(request), reply_(reply)
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
    void management_command()
    {
        if (nic_model().spec().model_pci_commands)
            pci_transfer(nic().cpu0(), nic().hosts().nic, nic_model().timings().command_size, trace::Op::PCI_COMMAND,
                         p_.nid);
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
        // The wait's timeout exists once the engine has handled the wait, after this
        // actor yields: a gate that ran in the same round must look again.
        p_.waiting = true;
        ++g_sim_activity;
        if (deadline < 0) p_.activity->wait(lock);
        else if (deadline > sg4::Engine::get_clock()) p_.activity->wait_until(lock, deadline);
        p_.waiting = false;
        return std::exchange(p_.abort_requested, false);
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
    };

    EmptyPoll begin_empty_poll()
    {
        double now = sg4::Engine::get_clock();
        if (p_.idle_since < 0) p_.idle_since = now;
        double idle = std::min(now - p_.idle_since, kPollIdleLimit);
        return {now + std::max(p_.poll_quantum, kPollIdleFraction * idle), p_.arrivals};
    }

    // While the proxy waits in an empty poll, the gate knows its deadline.
    class PollInProgress {
    public:
        PollInProgress(RankPortals& p, double deadline) : p_(p)
        {
            p_.poll_until = deadline;
            p_.poll_ended = false;
            ++g_polls_in_progress;
            wake_gate_for_poll();
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
        if (p_.arrivals == poll.arrivals) return false;
        if (p_.last_arrival_visible_at <= sg4::Engine::get_clock()) return true;
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

    void poll_found_work() { sim::poll_found_work(p_); }

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
    int eq_alloc();
    int eq_free();
    int wait_events(const uint32_t* handles, uint32_t count, double timeout, const char* what);
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
};

int Call::run()
{
    auto op = static_cast<wire::Op>(request_.op);
    if (op == wire::Op::PtlInit) {
        ++p_.init_count;
        sg4::this_actor::sleep_for(nic_model().timings().ptl_init);
        return PTL_OK;
    }
    if (p_.init_count == 0) return PTL_NO_INIT;
    switch (op) {
    case wire::Op::PtlFini:
        capture_pending_payloads(p_);
        --p_.init_count;
        return PTL_OK;
    case wire::Op::PtlNIInit: return ni_init();
    case wire::Op::PtlNIFini: return ni_fini();
    case wire::Op::PtlPTAlloc: return pt_alloc();
    case wire::Op::PtlPTFree: return pt_free();
    case wire::Op::PtlPTEnable: return pt_enable(true);
    case wire::Op::PtlPTDisable: return pt_enable(false);
    case wire::Op::PtlMDBind: return md_bind();
    case wire::Op::PtlMDRelease: return md_release();
    case wire::Op::PtlMEAppend: return me_append();
    case wire::Op::PtlMEUnlink: return me_unlink();
    case wire::Op::PtlMESearch: return me_search();
    case wire::Op::PtlSetMap: return set_map();
    case wire::Op::PtlGetMap: return get_map();
    case wire::Op::PtlNIStatus: {
        const auto& a = args<wire::HandleArgs>();
        NetworkInterface* n = ni(a.handle);
        if (!n || a.reserved >= PTL_SR_LAST) return PTL_ARG_INVALID;
        out<wire::HandleReply>().value = static_cast<uint32_t>(n->status[a.reserved]);
        return PTL_OK;
    }
    case wire::Op::PtlNIHandle: return ni_handle();
    case wire::Op::PtlEQAlloc: return eq_alloc();
    case wire::Op::PtlEQFree: return eq_free();
    case wire::Op::PtlEQGet: return eq_get(false);
    case wire::Op::PtlEQWait: return eq_get(true);
    case wire::Op::PtlEQPoll: return eq_poll();
    case wire::Op::PtlCTAlloc: return ct_alloc();
    case wire::Op::PtlCTFree: return ct_free();
    case wire::Op::PtlCTGet: return ct_get();
    case wire::Op::PtlCTWait: return ct_wait();
    case wire::Op::PtlCTPoll: return ct_poll();
    case wire::Op::PtlCTSet: return ct_update(true);
    case wire::Op::PtlCTInc: return ct_update(false);
    case wire::Op::PtlGetId: return get_id(false);
    case wire::Op::PtlGetPhysId: return get_id(true);
    case wire::Op::PtlGetUid: {
        if (!ni(args<wire::HandleArgs>().handle)) return PTL_ARG_INVALID;
        out<wire::HandleReply>().value = static_cast<uint32_t>(getuid());
        return PTL_OK;
    }
    case wire::Op::PtlPut: return data(MessageType::Put);
    case wire::Op::PtlGet: return data(MessageType::Get);
    case wire::Op::PtlAtomic: return data(MessageType::Atomic);
    case wire::Op::PtlFetchAtomic: return data(MessageType::FetchAtomic);
    case wire::Op::PtlSwap: return data(MessageType::FetchAtomic, true);
    case wire::Op::PtlTriggered: return triggered();
    case wire::Op::PtlCTCancelTriggered: return cancel_triggered();
    default: return PTL_ARG_INVALID;
    }
}

int Call::ni_init()
{
    const auto& a = args<wire::NIInitArgs>();
    uint32_t options = a.options;
    if (options & ~PTL_NI_INIT_OPTIONS_MASK) return PTL_ARG_INVALID;
    bool matching = options & PTL_NI_MATCHING, non_matching = options & PTL_NI_NO_MATCHING;
    bool logical = options & PTL_NI_LOGICAL, physical = options & PTL_NI_PHYSICAL;
    if (matching == non_matching || logical == physical) return PTL_ARG_INVALID;
    if (a.iface != PTL_IFACE_DEFAULT && a.iface != 0) return PTL_ARG_INVALID;
    uint32_t index = (matching ? 0 : 1) + (logical ? 2 : 0);
    NetworkInterface& n = p_.nis[index];
    auto& reply = out<wire::NIInitReply>();
    if (n.used) {  // a second PtlNIInit of the same kind returns the same NI
        if (a.pid != PTL_PID_ANY && a.pid != n.pid) return PTL_ARG_INVALID;
        reply.ni = make_handle(HandleKind::NI, index);
        std::memcpy(reply.actual, &n.limits, sizeof n.limits);
        return PTL_OK;
    }
    // One pid per process on a node, shared by the process's NIs.
    uint32_t pid = a.pid;
    uint32_t own_pid = PTL_PID_ANY;
    for (const auto& other : p_.nis)
        if (other.used) own_pid = other.pid;
    if (pid == PTL_PID_ANY) {
        pid = own_pid;
        if (pid == PTL_PID_ANY)
            for (pid = kFirstAutomaticPid; g_pids.count({p_.nid, pid}); ++pid) {}
    } else {
        auto it = g_pids.find({p_.nid, pid});
        if (it != g_pids.end() && it->second != &p_) return PTL_PID_IN_USE;
        if (own_pid != PTL_PID_ANY && own_pid != pid) return PTL_ARG_INVALID;
    }
    // Reserved before the command's simulated delay, during which another rank of this
    // node may be choosing its own pid.
    g_pids[{p_.nid, pid}] = &p_;
    management_command();
    n = NetworkInterface{};
    n.used = true;
    n.index = index;
    n.options = options;
    n.pid = pid;
    n.owner = &p_;
    ptl_ni_limits_t desired;
    std::memcpy(&desired, a.desired, sizeof desired);
    n.limits = a.has_desired ? negotiate(desired) : default_limits();
    n.table.assign(static_cast<size_t>(n.limits.max_pt_index) + 1, PortalTableEntry{});
    n.command_slots = sg4::Semaphore::create(nic_model().spec().command_queue_depth);
    nic().interfaces().push_back(&n);
    reply.ni = make_handle(HandleKind::NI, index);
    std::memcpy(reply.actual, &n.limits, sizeof n.limits);
    return PTL_OK;
}

int Call::ni_fini()
{
    NetworkInterface* n = ni(args<wire::HandleArgs>().handle);
    if (!n) return PTL_ARG_INVALID;
    management_command();
    capture_pending_payloads(p_);
    // Every command accepted by the NIC before the NI goes away.
    uint32_t depth = nic_model().spec().command_queue_depth;
    for (uint32_t i = 0; i < depth; ++i) n->command_slots->acquire();
    for (uint32_t i = 0; i < depth; ++i) n->command_slots->release();
    for (auto& entry : p_.entries)
        if (entry && entry->ni == n->index) entry.reset();
    for (auto& q : p_.eqs)
        if (q.used && q.ni == n->index) q.close();
    for (auto& c : p_.cts)
        if (c.used && c.ni == n->index) c.close();
    for (auto& m : p_.mds)
        if (m.used && m.ni == n->index) m = MemoryDescriptor{};
    auto& list = nic().interfaces();
    list.erase(std::remove(list.begin(), list.end(), n), list.end());
    bool pid_still_used = false;
    for (const auto& other : p_.nis)
        pid_still_used |= other.used && &other != n && other.pid == n->pid;
    if (!pid_still_used) g_pids.erase({p_.nid, n->pid});
    n->used = false;
    n->table.clear();
    return PTL_OK;
}

int Call::pt_alloc()
{
    const auto& a = args<wire::PTAllocArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || (a.options & ~PTL_PT_ALLOC_OPTIONS_MASK) || !eq_or_none(a.eq, n->index)) return PTL_ARG_INVALID;
    if ((a.options & PTL_PT_FLOWCTRL) && a.eq == PTL_EQ_NONE) return PTL_PT_EQ_NEEDED;
    uint32_t index = a.pt_index;
    if (index == PTL_PT_ANY) {
        index = 0;
        while (index < n->table.size() && n->table[index].allocated) ++index;
        if (index == n->table.size()) return PTL_PT_FULL;
    } else if (index >= n->table.size()) {
        return PTL_ARG_INVALID;
    } else if (n->table[index].allocated) {
        return PTL_PT_IN_USE;
    }
    management_command();
    PortalTableEntry& pt = n->table[index];
    pt = PortalTableEntry{};
    pt.allocated = true;
    pt.enabled = true;
    pt.options = a.options;
    pt.eq = a.eq;
    out<wire::HandleReply>().value = index;
    return PTL_OK;
}

int Call::pt_free()
{
    const auto& a = args<wire::PTIndexArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated) return PTL_ARG_INVALID;
    PortalTableEntry& pt = n->table[a.pt_index];
    if (!pt.priority.empty() || !pt.overflow.empty()) return PTL_PT_IN_USE;
    management_command();
    pt = PortalTableEntry{};
    return PTL_OK;
}

int Call::pt_enable(bool enable)
{
    const auto& a = args<wire::PTIndexArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated) return PTL_ARG_INVALID;
    management_command();
    n->table[a.pt_index].enabled = enable;
    return PTL_OK;
}

// An I/O vector longer than the NI allows: PTL_ARG_INVALID, which callers such as Open MPI's
// osc/portals4 pass on without a word (MPI_ERR_BUFFER from an MPI_Put), hence the warning.
bool Call::too_many_iovecs(const char* call, uint64_t entries, uint32_t limit) const
{
    if (entries <= limit) return false;
    XBT_WARN("rank %d: %s with an I/O vector of %llu entries, more than nic.limits.max_iovecs (%u): PTL_ARG_INVALID",
             r_.rank, call, static_cast<unsigned long long>(entries), limit);
    return true;
}

int Call::md_bind()
{
    const auto& a = args<wire::MDBindArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || (a.options & ~PTL_MD_OPTIONS_MASK) || !eq_or_none(a.eq, n->index) || !ct_or_none(a.ct, n->index))
        return PTL_ARG_INVALID;
    // With PTL_IOVEC, `length` counts the entries of the vector at `start`.
    bool iovec = a.options & PTL_IOVEC;
    if (iovec && too_many_iovecs("PtlMDBind", a.length, n->limits.max_iovecs)) return PTL_ARG_INVALID;
    auto bytes = region_bytes(RankRegion{r_.pid, a.start, a.length, iovec});
    if (!bytes) return PTL_ARG_INVALID;
    uint32_t handle = allocate(p_.mds, HandleKind::MD, n->limits.max_mds);
    if (handle == PTL_INVALID_HANDLE) return PTL_NO_SPACE;
    management_command();
    MemoryDescriptor& m = p_.mds[handle_index(handle)];
    m = MemoryDescriptor{true, n->index, a.start, *bytes, a.options, a.eq, a.ct, iovec ? a.length : 0};
    out<wire::HandleReply>().handle = handle;
    return PTL_OK;
}

int Call::md_release()
{
    MemoryDescriptor* m = md(args<wire::HandleArgs>().handle);
    if (!m) return PTL_ARG_INVALID;
    management_command();
    capture_pending_payloads(p_);
    *m = MemoryDescriptor{};
    return PTL_OK;
}

// Checks an entry's arguments and creates it, with its handle, not linked yet.
int Call::new_entry(const wire::MEAppendArgs& a, ListEntryPtr& out)
{
    NetworkInterface* n = ni(a.ni);
    if (!n || n->matching() == static_cast<bool>(a.is_le)) return PTL_ARG_INVALID;
    uint32_t mask = a.is_le ? PTL_LE_APPEND_OPTIONS_MASK : PTL_ME_APPEND_OPTIONS_MASK;
    if ((a.options & ~mask) || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated ||
        !ct_or_none(a.ct, n->index))
        return PTL_ARG_INVALID;
    if (a.list != PTL_PRIORITY_LIST && a.list != PTL_OVERFLOW_LIST) return PTL_ARG_INVALID;
    bool iovec = a.options & PTL_IOVEC;
    if (iovec && too_many_iovecs(a.is_le ? "PtlLEAppend" : "PtlMEAppend", a.length, n->limits.max_iovecs))
        return PTL_ARG_INVALID;
    auto bytes = region_bytes(RankRegion{r_.pid, a.start, a.length, iovec});
    if (!bytes) return PTL_ARG_INVALID;
    PortalTableEntry& pt = n->table[a.pt_index];
    // PTL_PT_ONLY_USE_ONCE and PTL_PT_ONLY_TRUNCATE are hints to the NIC, not rules:
    // Open MPI's MTL sets both and still appends persistent overflow entries.
    if (pt.priority.size() + pt.overflow.size() >= static_cast<size_t>(n->limits.max_list_size)) return PTL_LIST_TOO_LONG;
    size_t live = std::count_if(p_.entries.begin(), p_.entries.end(), [](const auto& e) { return e != nullptr; });
    if (live >= static_cast<size_t>(n->limits.max_entries)) return PTL_NO_SPACE;
    management_command();
    auto entry = std::make_shared<ListEntry>();
    uint32_t index = static_cast<uint32_t>(p_.entries.size());
    for (uint32_t i = 0; i < p_.entries.size(); ++i)
        if (!p_.entries[i]) {
            index = i;
            break;
        }
    if (index == p_.entries.size()) p_.entries.emplace_back();
    p_.entries[index] = entry;
    entry->handle = make_handle(a.is_le ? HandleKind::LE : HandleKind::ME, index);
    entry->ni = n->index;
    entry->pt_index = a.pt_index;
    entry->list = static_cast<ptl_list_t>(a.list);
    entry->start = a.start;
    entry->ct = a.ct;
    entry->min_free = a.min_free;
    entry->user_ptr = a.user_ptr;
    entry->uid = a.uid;
    entry->criteria = criteria_of(a, *n);
    entry->criteria.length = *bytes;
    entry->iov_count = iovec ? a.length : 0;
    out = entry;
    return PTL_OK;
}

int Call::me_append()
{
    ListEntryPtr entry;
    if (int rc = new_entry(args<wire::MEAppendArgs>(), entry); rc != PTL_OK) return rc;
    out<wire::HandleReply>().handle = entry->handle;
    report_link(nic(), p_, entry, claim_and_link(p_, entry));
    return PTL_OK;
}

int Call::me_search()
{
    const auto& a = args<wire::MEAppendArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || n->matching() == static_cast<bool>(a.is_le)) return PTL_ARG_INVALID;
    uint32_t mask = a.is_le ? PTL_LE_APPEND_OPTIONS_MASK : PTL_ME_APPEND_OPTIONS_MASK;
    if ((a.options & ~mask) || a.pt_index >= n->table.size() || !n->table[a.pt_index].allocated ||
        !ct_or_none(a.ct, n->index) || (a.list != PTL_SEARCH_ONLY && a.list != PTL_SEARCH_DELETE))
        return PTL_ARG_INVALID;
    // A probing loop (MPI_Iprobe until a message comes: a search, its SEARCH event, one
    // more poll) lets time pass in its searches: a search-only right after an empty poll
    // or a search that found nothing first waits out a polling step, and the reply tells
    // the rank that the empty poll after its SEARCH event is free (mirror_reads.cpp). One
    // round trip per probe instead of two, and the step still grows, so that a long wait
    // costs few probes. The first search after other work does not wait: a program that
    // probes once, then does something else, is not delayed.
    bool step = a.list == PTL_SEARCH_ONLY && p_.probing && !unseen_event_visible();
    bool arrived = false;
    if (step) {
        r_.waiting_on.set([] { return std::string("PtlMESearch in a probing loop"); });
        arrived = fast_forward(begin_empty_poll());
    }
    ListEntry probe;
    probe.ni = n->index;
    probe.criteria = criteria_of(a, *n);
    probe.ct = a.ct;
    PortalTableEntry& pt = n->table[a.pt_index];
    bool claim = a.list == PTL_SEARCH_DELETE;
    TakenHeaders found = take_unexpected(pt, probe, a.user_ptr, claim);
    report_unexpected(nic(), p_, found, probe, pt.eq, claim);
    if (step) {
        out<wire::HandleReply>().value = 1;
        if (found.events.empty() && !arrived) poll_found_nothing(false);
        else poll_found_work();
    }
    if (found.events.empty()) {
        ptl_event_t event{};
        event.type = PTL_EVENT_SEARCH;
        event.user_ptr = reinterpret_cast<void*>(a.user_ptr);
        event.pt_index = a.pt_index;
        event.ni_fail_type = PTL_NI_NO_MATCH;
        write_event(nic(), p_, pt.eq, event);
    }
    return PTL_OK;
}

int Call::set_map()
{
    const auto& a = args<wire::MapArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || !(n->options & PTL_NI_LOGICAL) || a.size == 0 || a.size > (1u << 24)) return PTL_ARG_INVALID;
    if (!n->map.empty()) return PTL_IGNORED;  // the map of an NI is set once
    std::vector<ptl_process_t> map(a.size);
    if (!read_rank_memory(r_.pid, a.address, map.data(), a.size * sizeof(ptl_process_t))) return PTL_ARG_INVALID;
    management_command();
    n->map = std::move(map);
    return PTL_OK;
}

int Call::get_map()
{
    const auto& a = args<wire::MapArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || !(n->options & PTL_NI_LOGICAL)) return PTL_ARG_INVALID;
    if (n->map.empty()) return PTL_NO_SPACE;
    uint64_t copied = std::min<uint64_t>(a.size, n->map.size());
    if (copied && !write_rank_memory(r_.pid, a.address, n->map.data(), copied * sizeof(ptl_process_t)))
        return PTL_ARG_INVALID;
    out<wire::HandleReply>().process = n->map.size();
    return PTL_OK;
}

// The NI an object belongs to.
int Call::ni_handle()
{
    uint32_t handle = args<wire::HandleArgs>().handle;
    uint32_t index = handle_index(handle);
    std::optional<uint32_t> owner;
    switch (handle_kind(handle)) {
    case HandleKind::NI:
        if (ni(handle)) owner = index;
        break;
    case HandleKind::EQ:
        if (EventQueue* q = eq(handle)) owner = q->ni;
        break;
    case HandleKind::CT:
        if (Counter* c = ct(handle)) owner = c->ni;
        break;
    case HandleKind::MD:
        if (MemoryDescriptor* m = md(handle)) owner = m->ni;
        break;
    case HandleKind::ME:
    case HandleKind::LE:
        if (ListEntryPtr e = list_entry(handle)) owner = e->ni;
        break;
    }
    if (!owner) return PTL_ARG_INVALID;
    out<wire::HandleReply>().handle = make_handle(HandleKind::NI, *owner);
    return PTL_OK;
}

int Call::me_unlink()
{
    ListEntryPtr e = list_entry(args<wire::HandleArgs>().handle);
    if (!e) return PTL_ARG_INVALID;
    management_command();
    unlink_entry(p_, p_.nis[e->ni], e);
    return PTL_OK;
}

int Call::eq_alloc()
{
    const auto& a = args<wire::EQAllocArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n) return PTL_ARG_INVALID;
    uint32_t handle = allocate(p_.eqs, HandleKind::EQ, n->limits.max_eqs);
    if (handle == PTL_INVALID_HANDLE) return PTL_NO_SPACE;
    management_command();
    uint32_t index = handle_index(handle);
    p_.eqs[index].open(n->index, a.count, handle, p_.eq_mirror(index), p_.replies());
    out<wire::HandleReply>().handle = handle;
    return PTL_OK;
}

int Call::eq_free()
{
    EventQueue* q = eq(args<wire::HandleArgs>().handle);
    if (!q) return PTL_ARG_INVALID;
    management_command();
    q->close();
    return PTL_OK;
}

// Waits for the first visible event of any of `handles`, until `deadline` (< 0: forever).
// A non-blocking poll (PtlEQGet, PtlEQPoll with timeout 0) never blocks the program, but
// an empty one fast-forwards: the rank waits in simulated time for the next event in any
// of its queues or one polling quantum, which is what a real polling loop would have spent
// (DESIGN.md "Polling"). The quantum grows while polls find nothing and resets on an event.
int Call::wait_events(const uint32_t* handles, uint32_t count, double timeout, const char* what)
{
    for (uint32_t i = 0; i < count; ++i)
        if (!eq(handles[i])) return PTL_ARG_INVALID;
    bool polling = timeout == 0;
    double now = sg4::Engine::get_clock();
    EmptyPoll poll = polling ? begin_empty_poll() : EmptyPoll{-1.0, 0};
    std::optional<PollInProgress> in_poll;
    if (polling) in_poll.emplace(p_, poll.deadline);
    double deadline = polling || timeout < 0 ? -1.0 : now + timeout;
    r_.waiting_on.set([what, first = handles[0], count] {
        return count == 1 ? fmt::format("{}(eq {:#x})", what, first) : fmt::format("{}({} queues)", what, count);
    });
    struct LookedAtEvents {  // whatever the answer, the rank has now read its queues
        RankPortals& p;
        ~LookedAtEvents() { set_events_looked(p, p.events); }
    } looked{p_};
    std::unique_lock lock(*p_.mutex);
    for (bool first = true;; first = false) {
        double earliest = -1;
        for (uint32_t i = 0; i < count; ++i) {
            EventQueue* q = eq(handles[i]);
            if (!q) return PTL_ARG_INVALID;  // freed meanwhile
            ptl_event_t event;
            double next_visible;
            if (take_event(*q, event, next_visible)) return finish_event(*q, event, i);
            if (next_visible >= 0 && (earliest < 0 || next_visible < earliest)) earliest = next_visible;
        }
        // An unseen event elsewhere: the loop will take it on its next round (and count it
        // as work then, if it is: is_work()). No fast-forward, and no step growth.
        if (polling && first && unseen_event_visible()) return PTL_EQ_EMPTY;
        if (deadline >= 0 && sg4::Engine::get_clock() >= deadline) break;
        if (in_poll && in_poll->ended()) break;
        double until = deadline;
        if (earliest >= 0 && (until < 0 || earliest < until)) until = earliest;
        if (polling && arrival_visible(poll, until)) {  // work elsewhere: let the loop see it
            poll_found_work();
            return PTL_EQ_EMPTY;
        }
        if (wait_for_activity(lock, until) && !polling) return PTL_INTERRUPTED;
    }
    if (polling) poll_found_nothing();
    return PTL_EQ_EMPTY;
}

int Call::eq_get(bool wait)
{
    uint32_t handle = args<wire::HandleArgs>().handle;
    return wait_events(&handle, 1, wait ? -1.0 : 0.0, wait ? "PtlEQWait" : "PtlEQGet");
}

int Call::eq_poll()
{
    const auto& a = args<wire::EQPollArgs>();
    if (a.size == 0 || a.size > wire::kMaxPollHandles) return PTL_ARG_INVALID;
    double timeout = a.timeout_ms == PTL_TIME_FOREVER ? -1.0 : a.timeout_ms * 1e-3;
    return wait_events(a.handles, a.size, timeout, "PtlEQPoll");
}

int Call::ct_alloc()
{
    NetworkInterface* n = ni(args<wire::HandleArgs>().handle);
    if (!n) return PTL_ARG_INVALID;
    uint32_t handle = allocate(p_.cts, HandleKind::CT, n->limits.max_cts);
    if (handle == PTL_INVALID_HANDLE) return PTL_NO_SPACE;
    management_command();
    uint32_t index = handle_index(handle);
    p_.cts[index].open(n->index, handle, p_.ct_mirror(index), p_.replies());
    out<wire::HandleReply>().handle = handle;
    return PTL_OK;
}

int Call::ct_free()
{
    Counter* c = ct(args<wire::HandleArgs>().handle);
    if (!c) return PTL_ARG_INVALID;
    management_command();
    c->close();
    return PTL_OK;
}

// A PtlCTGet that reads the value the previous one returned is a polling loop's empty
// poll: like an empty PtlEQGet it fast-forwards, until the counter changes or one polling
// quantum passes. Without it, a loop on PtlCTGet would spin with simulated time frozen.
int Call::ct_get()
{
    uint32_t handle = args<wire::HandleArgs>().handle;
    Counter* c = ct(handle);
    if (!c) return PTL_ARG_INVALID;
    auto unchanged = [](const Counter& counter) {
        ptl_ct_event_t read = counter.last_read();
        return counter.value.success == read.success && counter.value.failure == read.failure;
    };
    if (unchanged(*c)) {
        r_.waiting_on.set([handle, success = c->value.success] {
            return fmt::format("PtlCTGet(ct {:#x}) with the counter at {}", handle, success);
        });
        EmptyPoll poll = begin_empty_poll();
        PollInProgress in_poll(p_, poll.deadline);
        bool elsewhere = false;
        std::unique_lock lock(*p_.mutex);
        while ((c = ct(handle)) != nullptr && unchanged(*c) && !in_poll.ended()) {
            double until = -1.0;
            if ((elsewhere = arrival_visible(poll, until))) break;
            wait_for_activity(lock, until);
        }
        if (!c) return PTL_ARG_INVALID;  // freed meanwhile
        if (unchanged(*c) && !elsewhere) poll_found_nothing();
        else poll_found_work();
    } else {
        poll_found_work();
    }
    c->set_last_read(c->value);
    auto& reply = out<wire::CTReply>();
    reply.success = c->value.success;
    reply.failure = c->value.failure;
    return PTL_OK;
}

int Call::ct_wait()
{
    const auto& a = args<wire::CTArgs>();
    std::unique_lock lock(*p_.mutex);
    while (true) {
        Counter* c = ct(a.ct);
        if (!c) return PTL_ARG_INVALID;
        r_.waiting_on.set([a, value = c->value] {
            return fmt::format("PtlCTWait(ct {:#x}, test {}) with the counter at {} (failures {})", a.ct, a.success,
                               value.success, value.failure);
        });
        if (c->value.success >= a.success || c->value.failure > 0) {
            auto& reply = out<wire::CTReply>();
            reply.success = c->value.success;
            reply.failure = c->value.failure;
            return PTL_OK;
        }
        if (wait_for_activity(lock, -1)) return PTL_INTERRUPTED;
    }
}

int Call::ct_poll()
{
    const auto& a = args<wire::CTPollArgs>();
    if (a.size == 0 || a.size > wire::kMaxPollHandles) return PTL_ARG_INVALID;
    double deadline = a.timeout_ms == PTL_TIME_FOREVER ? -1.0 : sg4::Engine::get_clock() + a.timeout_ms * 1e-3;
    r_.waiting_on.set([size = a.size] { return fmt::format("PtlCTPoll({} counters)", size); });
    std::unique_lock lock(*p_.mutex);
    while (true) {
        for (uint32_t i = 0; i < a.size; ++i) {
            Counter* c = ct(a.handles[i]);
            if (!c) return PTL_ARG_INVALID;
            if (c->value.success >= a.tests[i] || c->value.failure > 0) {
                auto& reply = out<wire::CTReply>();
                reply.success = c->value.success;
                reply.failure = c->value.failure;
                reply.which = i;
                return PTL_OK;
            }
        }
        if (deadline >= 0 && sg4::Engine::get_clock() >= deadline) return PTL_CT_NONE_REACHED;
        if (wait_for_activity(lock, deadline)) return PTL_INTERRUPTED;
    }
}

int Call::ct_update(bool set)
{
    const auto& a = args<wire::CTArgs>();
    if (!ct(a.ct)) return PTL_ARG_INVALID;
    if (set) set_counter(p_, a.ct, {a.success, a.failure});
    else count_event(p_, a.ct, a.success, a.failure);
    return PTL_OK;
}

int Call::get_id(bool physical)
{
    NetworkInterface* n = ni(args<wire::HandleArgs>().handle);
    if (!n) return PTL_ARG_INVALID;
    ptl_process_t id{};
    if (!physical && (n->options & PTL_NI_LOGICAL)) id.rank = static_cast<ptl_rank_t>(r_.rank);
    else {
        id.phys.nid = p_.nid;
        id.phys.pid = n->pid;
    }
    std::memcpy(&out<wire::HandleReply>().process, &id, sizeof id);
    return PTL_OK;
}

// Validates a data operation (Put, Get, Atomic, FetchAtomic, Swap) and builds its
// transfer, without touching the initiator's memory yet.
int Call::prepare(MessageType kind, bool swap, const wire::FetchArgs& f, TransferPtr& out)
{
    bool fetch = kind == MessageType::FetchAtomic;
    const wire::DataArgs& a = f.data;
    MemoryDescriptor* m = md(a.md);
    if (!m) return PTL_ARG_INVALID;
    NetworkInterface& n = p_.nis[m->ni];
    MemoryDescriptor* get_md = nullptr;
    if (fetch) {
        get_md = md(f.get_md);
        if (!get_md || get_md->ni != m->ni) return PTL_ARG_INVALID;
        if (f.local_get_offset > get_md->length || a.length > get_md->length - f.local_get_offset) return PTL_ARG_INVALID;
        if (a.length > n.limits.max_fetch_atomic_size) return PTL_ARG_INVALID;
        bool swap_op = a.atomic_op >= PTL_SWAP && a.atomic_op <= PTL_MSWAP;
        if (swap != swap_op || !operation_allowed(a.atomic_op, a.atomic_type)) return PTL_ARG_INVALID;
        size_t element = datatype_size(a.atomic_type);
        if (a.length % element != 0) return PTL_ARG_INVALID;
        if (swap && a.atomic_op != PTL_SWAP && a.length != element) return PTL_ARG_INVALID;  // one element
    }
    if (a.local_offset > m->length || a.length > m->length - a.local_offset) return PTL_ARG_INVALID;
    if (a.length > n.limits.max_msg_size) return PTL_ARG_INVALID;
    if (kind != MessageType::Get && a.ack_req > PTL_OC_ACK_REQ) return PTL_ARG_INVALID;
    if (a.pt_index > static_cast<uint32_t>(n.limits.max_pt_index)) return PTL_ARG_INVALID;
    if (kind == MessageType::Atomic) {
        if (!operation_allowed(a.atomic_op, a.atomic_type) || a.atomic_op >= PTL_SWAP) return PTL_ARG_INVALID;
        if (a.length > n.limits.max_atomic_size || a.length % datatype_size(a.atomic_type) != 0) return PTL_ARG_INVALID;
    }
    ptl_process_t target;
    std::memcpy(&target, &a.target, sizeof target);
    if (n.options & PTL_NI_LOGICAL) {  // rank -> (nid, pid) through the NI's map
        if (target.rank >= n.map.size()) return PTL_ARG_INVALID;
        target = n.map[target.rank];
    }
    if (!nic_model().has_nid(target.phys.nid)) return PTL_ARG_INVALID;

    auto t = std::make_shared<Transfer>();
    t->kind = kind;
    t->initiator = &p_;
    t->initiator_nid = p_.nid;
    t->initiator_pid = n.pid;
    t->request_vn = r_.service_mode ? VirtualNetwork::ServiceRequest : VirtualNetwork::ComputeRequest;
    t->ni_index = n.index;
    t->matching = n.matching();
    t->md = *m;
    t->local_offset = a.local_offset;
    t->length = a.length;
    t->ack_req = kind == MessageType::Get || fetch ? PTL_NO_ACK_REQ : a.ack_req;
    t->target_nid = target.phys.nid;
    t->target_pid = target.phys.pid;
    t->pt_index = a.pt_index;
    t->match_bits = n.matching() ? a.match_bits : 0;
    t->remote_offset = a.remote_offset;
    t->user_ptr = a.user_ptr;
    t->hdr_data = a.hdr_data;
    t->atomic_op = a.atomic_op;
    t->atomic_type = a.atomic_type;
    if (fetch) {
        t->get_md = *get_md;
        t->local_get_offset = f.local_get_offset;
        t->has_compare = swap && a.atomic_op != PTL_SWAP;
        std::memcpy(t->compare, f.operand, sizeof t->compare);
    }
    out = std::move(t);
    return PTL_OK;
}

wire::FetchArgs Call::fetch_args(MessageType kind) const
{
    if (kind == MessageType::FetchAtomic) return args<wire::FetchArgs>();
    wire::FetchArgs f{};
    f.data = args<wire::DataArgs>();
    return f;
}

// CPU side of Put, Get, Atomic, FetchAtomic and Swap (appendix §5.1 to §5.5).
int Call::data(MessageType kind, bool swap)
{
    TransferPtr t;
    if (int rc = prepare(kind, swap, fetch_args(kind), t); rc != PTL_OK) return rc;
    capture_payload(t);
    ++r_.portals_ops;
    ++r_.messages_sent;
    if (kind != MessageType::Get) r_.bytes_sent += t->length;

    NetworkInterface& n = p_.nis[t->ni_index];
    r_.waiting_on = "a free slot in the NIC command queue";
    n.command_slots->acquire();
    const NicTimings& timing = nic_model().timings();
    const PlatformSpec& spec = nic_model().spec();
    uint64_t inline_bytes = inline_limit(t->matching);
    if (kind != MessageType::Get && !swap && spec.model_pci && t->length > inline_bytes &&
        t->length <= pio_limit(t->matching) && (t->md.options & PTL_MD_VOLATILE)) {
        t->pio = true;
        if (kind == MessageType::Put) {
            detached_pci(nic().cpu0(), nic().hosts().nic, t->length - inline_bytes, trace::Op::PCI_PIO_PAYLOAD, p_.nid);
            sg4::this_actor::sleep_for(timing.cpu_after_pio);
        } else {
            pci_transfer(nic().cpu0(), nic().hosts().nic, t->length - inline_bytes, trace::Op::PCI_PIO_PAYLOAD, p_.nid);
        }
    }
    uint64_t network_size = kind == MessageType::Get ? timing.get_request_size : t->length;
    auto* message = new Message{kind, t, network_size, p_.nid, t->target_nid, kind};
    r_.waiting_on = "the PCIe command write";
    double command_start = sg4::Engine::get_clock();
    nic().tx_queue(t->request_vn).push_blocking(message, timing.command_size);
    if (trace::enabled()) trace::record(trace::Op::PCI_COMMAND, p_.nid, p_.nid, command_start, sg4::Engine::get_clock());
    return PTL_OK;
}

// PtlTriggered*: the operation is registered with the NIC (one command write) and fires
// when the trigger counter reaches the threshold, which may be right away.
int Call::triggered()
{
    const auto& a = args<wire::TriggeredArgs>();
    Counter* trigger = ct(a.trigger_ct);
    if (!trigger) return PTL_ARG_INVALID;
    NetworkInterface& n = p_.nis[trigger->ni];
    uint64_t pending = 0;
    for (const auto& c : p_.cts) pending += c.triggers.size();
    if (pending >= static_cast<uint64_t>(n.limits.max_triggered_ops)) return PTL_NO_SPACE;
    std::function<void()> fire;
    RankPortals* owner = &p_;
    ListEntryPtr appended;  // PtlMEAppend: made now, linked by the trigger
    auto op = static_cast<wire::Op>(a.op);
    if (op == wire::Op::PtlCTInc || op == wire::Op::PtlCTSet) {
        Counter* target = ct(a.counter.ct);
        if (!target || target->ni != trigger->ni) return PTL_ARG_INVALID;
        uint32_t handle = a.counter.ct;
        ptl_ct_event_t value{a.counter.success, a.counter.failure};
        if (op == wire::Op::PtlCTInc)
            fire = [owner, handle, value] { count_event(*owner, handle, value.success, value.failure); };
        else
            fire = [owner, handle, value] { set_counter(*owner, handle, value); };
    } else if (op == wire::Op::PtlMEAppend) {
        NetworkInterface* target = ni(a.entry.ni);
        if (!target || target->index != trigger->ni) return PTL_ARG_INVALID;
        if (int rc = new_entry(a.entry, appended); rc != PTL_OK) return rc;  // its command write included
        appended->pending_append = true;
        out<wire::HandleReply>().handle = appended->handle;
        fire = [owner, appended] { append_triggered(*owner, appended); };
    } else if (op == wire::Op::PtlMEUnlink) {
        ListEntryPtr unlinked = list_entry(a.entry_handle);
        if (!unlinked || unlinked->ni != trigger->ni) return PTL_ARG_INVALID;
        fire = [owner, unlinked] { unlink_entry(*owner, owner->nis[unlinked->ni], unlinked); };
    } else {
        MessageType kind;
        bool swap = op == wire::Op::PtlSwap;
        switch (op) {
        case wire::Op::PtlPut: kind = MessageType::Put; break;
        case wire::Op::PtlGet: kind = MessageType::Get; break;
        case wire::Op::PtlAtomic: kind = MessageType::Atomic; break;
        case wire::Op::PtlFetchAtomic:
        case wire::Op::PtlSwap: kind = MessageType::FetchAtomic; break;
        default: return PTL_ARG_INVALID;
        }
        TransferPtr t;
        if (int rc = prepare(kind, swap, a.fetch, t); rc != PTL_OK) return rc;
        if (t->ni_index != trigger->ni) return PTL_ARG_INVALID;
        if (kind != MessageType::Get) r_.bytes_sent += t->length;
        ++r_.messages_sent;
        fire = [t] { issue_triggered(t); };
    }
    ++r_.portals_ops;
    if (!appended) management_command();
    trigger = ct(a.trigger_ct);  // the command write let other actors run
    if (!trigger) {
        if (appended) unlink_entry(p_, p_.nis[appended->ni], appended);
        return PTL_ARG_INVALID;
    }
    trigger->triggers.push_back(Trigger{a.threshold, p_.triggers_registered++, std::move(fire)});
    count_event(p_, a.trigger_ct, 0, 0);  // fires now if the threshold is already reached
    return PTL_OK;
}

int Call::cancel_triggered()
{
    Counter* c = ct(args<wire::HandleArgs>().handle);
    if (!c) return PTL_ARG_INVALID;
    c->triggers.clear();
    return PTL_OK;
}

}  // namespace

void unlink_entry(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry)
{
    if (entry->pending_append) {  // unlinked before its triggered append: it never will be
        entry->pending_append = false;
        release_handle(owner, entry);
        return;
    }
    if (!entry->linked) return;
    entry->linked = false;
    if (entry->pt_index < ni.table.size()) {
        PortalTableEntry& pt = ni.table[entry->pt_index];
        pt.priority.remove(entry);
        pt.overflow.remove(entry);
    }
    release_handle(owner, entry);
}

uint64_t g_vain_polls = 0;

RankPortals& attach_portals(RankRecord& rank, sg4::Host* core, uint32_t nid)
{
    auto portals = std::make_unique<RankPortals>();
    portals->rank = &rank;
    portals->nid = nid;
    portals->host = core;
    portals->mutex = sg4::Mutex::create();
    portals->activity = sg4::ConditionVariable::create();
    portals->poll_quantum = kPollQuantumStart;
    if (rank.slot.object) portals->mirror = &wire::mirror_of(*rank.slot.object);
    rank.portals = portals.get();
    g_portals.push_back(std::move(portals));
    return *rank.portals;
}

void learn_local_reads(RankRecord& rank)
{
    RankPortals* p = rank.portals;
    if (!p || !p->mirror) return;
    uint64_t local_reads = p->mirror->local_reads.load(std::memory_order_acquire);
    if (local_reads == p->local_reads_seen) return;
    rank.portals_ops += local_reads - p->local_reads_seen;
    rank.portals_local_ops += local_reads - p->local_reads_seen;
    p->local_reads_seen = local_reads;
    uint64_t found_work = p->mirror->local_polls_with_work.load(std::memory_order_acquire);
    if (found_work != p->local_polls_with_work_seen) {
        p->local_polls_with_work_seen = found_work;
        poll_found_work(*p);
    }
    for (EventQueue& q : p->eqs)
        if (q.used) q.learn_consumed();
}

void mark_reply(RankRecord& rank)
{
    wire::Mirror& mirror = wire::mirror_of(*rank.slot.object);
    if (const RankPortals* p = rank.portals) {
        mirror.events_at_reply.store(p->events, std::memory_order_relaxed);
        mirror.last_event_visible_at_reply.store(p->last_event_visible_at, std::memory_order_relaxed);
    }
    mirror.replies.fetch_add(1, std::memory_order_release);
}

int serve_portals(RankRecord& rank, const wire::Request& request, wire::Reply& reply)
{
    auto op = static_cast<wire::Op>(request.op);
    bool data_movement = op == wire::Op::PtlPut || op == wire::Op::PtlGet || op == wire::Op::PtlAtomic ||
                         op == wire::Op::PtlFetchAtomic || op == wire::Op::PtlSwap || op == wire::Op::PtlTriggered;
    if (!data_movement) ++rank.portals_ops;  // data calls count themselves once validated
    // Any call but a poll or a search ends a polling or probing loop (RankPortals::probing).
    bool loop_call = op == wire::Op::PtlEQGet || op == wire::Op::PtlEQPoll || op == wire::Op::PtlCTGet ||
                     op == wire::Op::PtlCTPoll || op == wire::Op::PtlMESearch;
    if (!loop_call && rank.portals) rank.portals->probing = false;
    int rc = Call(rank, request, reply).run();
    rank.waiting_on.clear();
    if (rank.portals) rank.portals->abort_requested = false;  // an abort meets only the wait it interrupts
    return rc;
}

namespace {

// The proxy waits in an empty poll that the gate has not ended yet.
bool poll_pending(const RankPortals& p)
{
    return p.poll_until >= 0 && !p.poll_ended;
}

}  // namespace

double earliest_poll_deadline()
{
    if (g_polls_in_progress == 0) return -1.0;
    double earliest = -1.0;
    for (const auto& p : g_portals)
        if (poll_pending(*p) && (earliest < 0 || p->poll_until < earliest)) earliest = p->poll_until;
    return earliest;
}

bool polls_settled()
{
    if (g_polls_in_progress == 0) return true;
    for (const auto& p : g_portals)
        if (poll_pending(*p) && !p->waiting) return false;
    return true;
}

void end_polls(double date)
{
    if (g_polls_in_progress == 0) return;
    for (const auto& p : g_portals)
        if (poll_pending(*p) && p->poll_until <= date) {
            p->poll_ended = true;
            p->activity->notify_all();
        }
}

void abort_blocking_wait(RankRecord& rank)
{
    auto op = static_cast<wire::Op>(rank.request.op);
    bool blocking_wait = op == wire::Op::PtlEQWait || op == wire::Op::PtlEQPoll || op == wire::Op::PtlCTWait ||
                         op == wire::Op::PtlCTPoll;
    if (rank.phase != RankPhase::Waiting || !blocking_wait || !rank.portals) return;
    rank.portals->abort_requested = true;
    rank.portals->activity->notify_all();
}

}  // namespace s4bxi::sim
