// The Portals engine's entry points (serve_portals, attach_portals, the polls the gate
// keeps), and the calls on NIs, portal table entries and memory descriptors.
#include "calls/portals_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "calls/call.hpp"
#include "services/rank_memory.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_portals, "The Portals 4 engine");

namespace s4bxi::sim {
namespace engine {

std::vector<std::unique_ptr<RankPortals>> g_portals;
int g_polls_in_progress = 0;
std::map<std::pair<uint32_t, uint32_t>, RankPortals*> g_pids;

namespace {

constexpr uint32_t kFirstAutomaticPid = 2048;

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

}  // namespace

// A poll found work (an event, a new counter value): the fast-forward of the next empty
// one starts afresh.
void poll_found_work(RankPortals& p)
{
    p.poll_quantum = kPollQuantumStart;
    ++p.work_found;
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
    if (n.used) {  // a second PtlNIInit of the same kind returns the same NI, until its PtlNIFini
        if (a.pid != PTL_PID_ANY && a.pid != n.pid) return PTL_ARG_INVALID;
        ++n.inits;
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
    n.inits = 1;
    n.index = index;
    n.options = options;
    n.pid = pid;
    n.owner = &p_;
    ptl_ni_limits_t desired;
    std::memcpy(&desired, a.desired, sizeof desired);
    n.limits = a.has_desired ? negotiate(desired) : default_limits();
    n.volatile_limit = a.has_desired && desired.max_volatile_size > 0;
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
    if (--n->inits > 0) return PTL_OK;  // the NI lives until every PtlNIInit has had its PtlNIFini
    management_command();
    capture_pending_payloads(p_);
    // Every command accepted by the NIC before the NI goes away.
    uint32_t depth = nic_model().spec().command_queue_depth;
    for (uint32_t i = 0; i < depth; ++i) n->command_slots->acquire();
    for (uint32_t i = 0; i < depth; ++i) n->command_slots->release();
    for (uint32_t i = 0; i < p_.entries.size(); ++i)
        if (p_.entries[i] && p_.entries[i]->ni == n->index) forget_entry(p_, i);
    for (auto& q : p_.eqs)
        if (q.used && q.ni == n->index) q.close();
    for (auto& c : p_.cts)
        if (c.used && c.ni == n->index) c.close();
    for (auto& m : p_.mds)
        if (m.used && m.ni == n->index) m = MemoryDescriptor{};
    p_.activity->notify_all();  // another thread's wait on them returns PTL_INTERRUPTED
    auto& list = nic().interfaces();
    list.erase(std::remove(list.begin(), list.end(), n), list.end());
    bool pid_still_used = false;
    for (const auto& other : p_.nis)
        pid_still_used |= other.used && &other != n && other.pid == n->pid;
    if (!pid_still_used) g_pids.erase({p_.nid, n->pid});
    n->used = false;
    n->table.clear();
    n->unexpected_total = 0;
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
    n->unexpected_total -= pt.unexpected.size();
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
    n->unexpected_total -= pt.unexpected.size();
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
    auto bytes = region_bytes(RankRegion{&r_, a.start, a.length, iovec});
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

int Call::set_map()
{
    const auto& a = args<wire::MapArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || !(n->options & PTL_NI_LOGICAL) || a.size == 0 || a.size > (1u << 24)) return PTL_ARG_INVALID;
    if (!n->map.empty()) return PTL_IGNORED;  // the map of an NI is set once
    std::vector<ptl_process_t> map(a.size);
    if (!read_rank_memory(r_, a.address, map.data(), a.size * sizeof(ptl_process_t))) return PTL_ARG_INVALID;
    management_command();
    n->map = std::move(map);
    n->rank_in_map.reserve(n->map.size());
    for (uint32_t rank = 0; rank < n->map.size(); ++rank)  // the first rank naming a process is its rank
        n->rank_in_map.try_emplace(NetworkInterface::process_key(n->map[rank].phys.nid, n->map[rank].phys.pid), rank);
    return PTL_OK;
}

int Call::get_map()
{
    const auto& a = args<wire::MapArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n || !(n->options & PTL_NI_LOGICAL)) return PTL_ARG_INVALID;
    if (n->map.empty()) return PTL_NO_SPACE;
    uint64_t copied = std::min<uint64_t>(a.size, n->map.size());
    if (copied && !write_rank_memory(r_, a.address, n->map.data(), copied * sizeof(ptl_process_t)))
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

int Call::get_id(bool physical)
{
    NetworkInterface* n = ni(args<wire::HandleArgs>().handle);
    if (!n) return PTL_ARG_INVALID;
    ptl_process_t id{};
    if (!physical && (n->options & PTL_NI_LOGICAL)) {
        id.rank = static_cast<ptl_rank_t>(own_rank(p_, *n));
    } else {
        id.phys.nid = p_.nid;
        id.phys.pid = n->pid;
    }
    std::memcpy(&out<wire::HandleReply>().process, &id, sizeof id);
    return PTL_OK;
}
}  // namespace engine

using namespace engine;

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

bool loop_call(wire::Op op)
{
    return op == wire::Op::PtlEQGet || op == wire::Op::PtlEQPoll || op == wire::Op::PtlCTGet ||
           op == wire::Op::PtlCTPoll || op == wire::Op::PtlMESearch;
}

int serve_portals(RankRecord& rank, const wire::Request& request, wire::Reply& reply)
{
    auto op = static_cast<wire::Op>(request.op);
    bool data_movement = op == wire::Op::PtlPut || op == wire::Op::PtlGet || op == wire::Op::PtlAtomic ||
                         op == wire::Op::PtlFetchAtomic || op == wire::Op::PtlSwap || op == wire::Op::PtlTriggered;
    if (!data_movement) ++rank.portals_ops;  // data calls count themselves once validated
    // Any call but a poll or a search ends a polling or probing loop (RankPortals::probing).
    if (!loop_call(op) && rank.portals) rank.portals->probing = false;
    int rc = Call(rank, request, reply).run();
    rank.waiting_on.clear();
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
    bool blocking_wait = wire::parkable(static_cast<wire::Op>(rank.request.op), rank.request.args);
    bool parked = std::any_of(rank.parked.begin(), rank.parked.end(), [](const ParkedSlot& s) { return s.used; });
    if (!((rank.phase == RankPhase::Waiting && blocking_wait) || parked) || !rank.portals) return;
    ++rank.portals->aborts;
    rank.portals->activity->notify_all();
}

bool exposes_memory(const RankRecord& rank)
{
    if (!rank.portals) return false;
    const auto& entries = rank.portals->entries;
    return std::any_of(entries.begin(), entries.end(), [](const ListEntryPtr& e) { return e != nullptr; });
}

void wake_rank_waits(RankRecord& rank)
{
    if (rank.portals) rank.portals->activity->notify_all();
}

}  // namespace s4bxi::sim
