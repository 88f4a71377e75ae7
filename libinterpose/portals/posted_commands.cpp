#include "portals/posted_commands.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "portals/entry_handles.hpp"
#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/atomic_rules.hpp"
#include "s4bxi/mirror.hpp"

namespace s4bxi::interpose::posted {
namespace {

struct KnownNi {
    bool used = false;
    uint32_t inits = 0;  // PtlNIInit calls not yet matched by a PtlNIFini, as the server counts them
    uint32_t options = 0;
    ptl_ni_limits_t limits{};
    std::vector<ptl_process_t> map;  // logical NIs, once PtlSetMap succeeded
    std::vector<bool> pts;           // portal table entries allocated
};

struct KnownMd {
    uint32_t ni = 0;
    uint32_t options = 0;
    uint64_t start = 0;
    uint64_t length = 0;
    bool has_eq = false;
    bool has_ct = false;
};

// Written by whichever thread makes the calls above, read by the simulated thread.
std::mutex g_mutex;
int g_inits = 0;
KnownNi g_nis[4];
std::unordered_map<uint32_t, KnownMd> g_mds;
std::unordered_map<uint32_t, uint32_t> g_cts;  // counter handle -> NI index
// Triggered operations registered on each counter, and in all: bounds of those the server
// still holds, which fire while the rank runs (max_triggered_ops).
std::unordered_map<uint32_t, uint64_t> g_triggers_on;
uint64_t g_triggers = 0;
std::unordered_set<uint32_t> g_reached_nids;

uint32_t ni_index(uint32_t handle)
{
    return handle & wire::kHandleIndexMask;
}

// The node a data call through `ni` reaches at `target`, as the server resolves it; false
// when the server would refuse the target (Call::prepare).
bool target_nid(const KnownNi& ni, uint64_t target, uint32_t& nid)
{
    ptl_process_t process;
    std::memcpy(&process, &target, sizeof process);
    if (ni.options & PTL_NI_LOGICAL) {
        if (process.rank >= ni.map.size()) return false;
        process = ni.map[process.rank];
    }
    nid = process.phys.nid;
    return true;
}

}  // namespace

void library_initialized(int inits)
{
    std::lock_guard lock(g_mutex);
    g_inits = inits;
}

void ni_initialized(uint32_t ni, uint32_t options, const ptl_ni_limits_t& actual)
{
    std::lock_guard lock(g_mutex);
    uint32_t index = ni_index(ni);
    if (index >= 4) return;
    KnownNi& n = g_nis[index];
    if (n.used) {  // the same NI again, until its last PtlNIFini
        ++n.inits;
        return;
    }
    n = KnownNi{};
    n.used = true;
    n.inits = 1;
    n.options = options;
    n.limits = actual;
}

void ni_finalized(uint32_t ni)
{
    std::lock_guard lock(g_mutex);
    uint32_t index = ni_index(ni);
    if (index >= 4 || !g_nis[index].used || --g_nis[index].inits > 0) return;
    g_nis[index] = KnownNi{};
    std::erase_if(g_mds, [index](const auto& entry) { return entry.second.ni == index; });
    std::erase_if(g_cts, [index](const auto& entry) {
        if (entry.second != index) return false;
        g_triggers -= std::exchange(g_triggers_on[entry.first], 0);
        return true;
    });
}

void pt_allocated(uint32_t ni, uint32_t pt_index)
{
    std::lock_guard lock(g_mutex);
    uint32_t index = ni_index(ni);
    if (index >= 4 || !g_nis[index].used || pt_index > static_cast<uint32_t>(g_nis[index].limits.max_pt_index)) return;
    std::vector<bool>& pts = g_nis[index].pts;
    if (pts.size() <= pt_index) pts.resize(pt_index + 1);
    pts[pt_index] = true;
}

void pt_freed(uint32_t ni, uint32_t pt_index)
{
    std::lock_guard lock(g_mutex);
    uint32_t index = ni_index(ni);
    if (index < 4 && pt_index < g_nis[index].pts.size()) g_nis[index].pts[pt_index] = false;
}

void ct_allocated(uint32_t ct, uint32_t ni)
{
    std::lock_guard lock(g_mutex);
    g_cts[ct] = ni_index(ni);
}

void ct_freed(uint32_t ct)
{
    std::lock_guard lock(g_mutex);
    g_cts.erase(ct);
    g_triggers -= std::exchange(g_triggers_on[ct], 0);
}

void triggered_registered(uint32_t trigger_ct)
{
    std::lock_guard lock(g_mutex);
    ++g_triggers_on[trigger_ct];
    ++g_triggers;
}

void triggers_cancelled(uint32_t ct)
{
    std::lock_guard lock(g_mutex);
    g_triggers -= std::exchange(g_triggers_on[ct], 0);
}

void md_bound(uint32_t md, uint32_t ni, const ptl_md_t& description)
{
    std::lock_guard lock(g_mutex);
    g_mds[md] = KnownMd{ni_index(ni),
                        description.options,
                        reinterpret_cast<uint64_t>(description.start),
                        description.length,
                        description.eq_handle != PTL_EQ_NONE,
                        description.ct_handle != PTL_CT_NONE};
}

void md_released(uint32_t md)
{
    std::lock_guard lock(g_mutex);
    g_mds.erase(md);
}

void map_set(uint32_t ni, uint64_t size, const ptl_process_t* mapping)
{
    std::lock_guard lock(g_mutex);
    uint32_t index = ni_index(ni);
    if (index >= 4 || !g_nis[index].used) return;
    g_nis[index].map.assign(mapping, mapping + size);
}

void target_reached(uint32_t md, uint64_t target)
{
    std::lock_guard lock(g_mutex);
    auto found = g_mds.find(md);
    if (found == g_mds.end()) return;
    uint32_t nid;
    if (target_nid(g_nis[found->second.ni], target, nid)) g_reached_nids.insert(nid);
}

namespace {

// [offset, offset + length) lies within the MD's bytes (no overflow).
bool within(const KnownMd& md, uint64_t offset, uint64_t length)
{
    return offset <= md.length && length <= md.length - offset;
}

// Every check of the server's Call::prepare on a data call, on what the rank knows; the
// caller holds g_mutex. False when the server could refuse the call.
bool acceptable(wire::Op op, const wire::FetchArgs& f)
{
    const wire::DataArgs& a = f.data;
    const bool fetch = op == wire::Op::PtlFetchAtomic || op == wire::Op::PtlSwap;
    if (g_inits <= 0) return false;  // PTL_NO_INIT
    auto found = g_mds.find(a.md);
    if (found == g_mds.end()) return false;
    const KnownMd& m = found->second;
    const KnownNi& n = g_nis[m.ni];
    if (!n.used) return false;
    // An I/O vector's length is its entries, its bytes the server's to count; a volatile
    // MD's payload is the caller's again when the call returns (the server copies it at
    // the call, and may move it by PIO).
    if (m.options & (PTL_IOVEC | PTL_MD_VOLATILE)) return false;
    if (fetch) {
        auto get = g_mds.find(f.get_md);
        if (get == g_mds.end() || get->second.ni != m.ni || (get->second.options & PTL_IOVEC)) return false;
        const KnownMd& g = get->second;
        if (!within(g, f.local_get_offset, a.length)) return false;
        if (a.length > n.limits.max_fetch_atomic_size || a.length > n.limits.max_atomic_size) return false;
        bool swap_op = a.atomic_op >= PTL_SWAP && a.atomic_op <= PTL_MSWAP;
        if ((op == wire::Op::PtlSwap) != swap_op || !operation_allowed(a.atomic_op, a.atomic_type)) return false;
        size_t element = datatype_size(a.atomic_type);
        if (a.length % element != 0) return false;
        if (op == wire::Op::PtlSwap && a.atomic_op != PTL_SWAP && a.length != element) return false;
    }
    if (!within(m, a.local_offset, a.length)) return false;
    if (a.length > n.limits.max_msg_size) return false;
    if (op == wire::Op::PtlPut || op == wire::Op::PtlAtomic) {
        if (a.ack_req > PTL_OC_ACK_REQ) return false;
        if (a.ack_req == PTL_ACK_REQ && !m.has_eq) return false;
        if (a.ack_req == PTL_CT_ACK_REQ && !m.has_ct) return false;
    }
    if (op == wire::Op::PtlAtomic) {
        if (!operation_allowed(a.atomic_op, a.atomic_type) || a.atomic_op >= PTL_SWAP) return false;
        if (a.length > n.limits.max_atomic_size || a.length % datatype_size(a.atomic_type) != 0) return false;
    }
    if (a.pt_index > static_cast<uint32_t>(n.limits.max_pt_index)) return false;
    uint32_t nid;
    return target_nid(n, a.target, nid) && g_reached_nids.count(nid);
}

}  // namespace

void carry_payload(wire::Op op, wire::DataCommand& command)
{
    const wire::DataArgs& a = command.fetch.data;
    command.carried_length = 0;
    if (op == wire::Op::PtlGet || a.length == 0 || a.length > wire::kCarriedPayloadBytes) return;
    const void* payload = nullptr;
    {
        std::lock_guard lock(g_mutex);
        auto found = g_mds.find(a.md);
        if (found == g_mds.end()) return;
        const KnownMd& m = found->second;
        // Out of the MD: the server refuses the call, and reads nothing.
        if ((m.options & PTL_IOVEC) || !within(m, a.local_offset, a.length)) return;
        payload = reinterpret_cast<const void*>(m.start + a.local_offset);
    }
    std::memcpy(command.carried, payload, a.length);
    command.carried_length = static_cast<uint32_t>(a.length);
}

bool try_post(wire::Op op, const wire::DataCommand& command)
{
    if (!on_simulated_thread()) return false;
    {
        std::lock_guard lock(g_mutex);
        if (!acceptable(op, command.fetch)) return false;
    }
    return post(op, &command, sizeof command);
}

bool try_post_counter(wire::Op op, const wire::CTArgs& args)
{
    if (!on_simulated_thread()) return false;
    {
        std::lock_guard lock(g_mutex);
        if (g_inits <= 0 || !g_cts.count(args.ct)) return false;
        // The server's check (Call::ct_update): an increment of one of the two.
        if (op == wire::Op::PtlCTInc && args.success != 0 && args.failure != 0) return false;
    }
    return post(op, &args, sizeof args);
}

bool try_post_triggered(const wire::TriggeredArgs& a)
{
    if (!on_simulated_thread()) return false;
    {
        std::lock_guard lock(g_mutex);
        if (g_inits <= 0) return false;
        auto trigger = g_cts.find(a.trigger_ct);
        if (trigger == g_cts.end() || !g_nis[trigger->second].used) return false;
        const uint32_t ni = trigger->second;
        if (g_triggers >= static_cast<uint64_t>(std::max(g_nis[ni].limits.max_triggered_ops, 0))) return false;
        auto op = static_cast<wire::Op>(a.op);
        switch (op) {
        case wire::Op::PtlCTInc:
        case wire::Op::PtlCTSet: {
            auto target = g_cts.find(a.counter.ct);
            if (target == g_cts.end() || target->second != ni) return false;
            if (op == wire::Op::PtlCTInc && a.counter.success != 0 && a.counter.failure != 0) return false;
            break;
        }
        case wire::Op::PtlPut:
        case wire::Op::PtlGet:
        case wire::Op::PtlAtomic:
        case wire::Op::PtlFetchAtomic:
        case wire::Op::PtlSwap:
            if (!acceptable(op, a.fetch) || g_mds.at(a.fetch.data.md).ni != ni) return false;
            break;
        default: return false;  // list operations: whether the entry to unlink is still there is the server's to say
        }
    }
    if (!post(wire::Op::PtlTriggered, &a, sizeof a)) return false;
    triggered_registered(a.trigger_ct);
    return true;
}

bool try_post_append(const wire::MEAppendArgs& a)
{
    if (!on_simulated_thread() || a.handle == 0) return false;
    uint64_t max_entries, max_list_size;
    {
        std::lock_guard lock(g_mutex);
        if (g_inits <= 0) return false;  // PTL_NO_INIT
        // An NI handle is its index (kind 0).
        if (a.ni >= 4 || !g_nis[a.ni].used) return false;
        const KnownNi& n = g_nis[a.ni];
        if (static_cast<bool>(n.options & PTL_NI_MATCHING) == static_cast<bool>(a.is_le)) return false;
        uint32_t mask = a.is_le ? PTL_LE_APPEND_OPTIONS_MASK : PTL_ME_APPEND_OPTIONS_MASK;
        // An I/O vector's bytes are the server's to count, in the rank's memory.
        if ((a.options & ~mask) || (a.options & PTL_IOVEC)) return false;
        if (a.pt_index >= n.pts.size() || !n.pts[a.pt_index]) return false;
        if (a.ct != PTL_CT_NONE) {
            auto found = g_cts.find(a.ct);
            if (found == g_cts.end() || found->second != a.ni) return false;
        }
        if (a.list != PTL_PRIORITY_LIST && a.list != PTL_OVERFLOW_LIST) return false;
        max_entries = static_cast<uint64_t>(std::max(n.limits.max_entries, 0));
        max_list_size = static_cast<uint64_t>(std::max(n.limits.max_list_size, 0));
    }
    if (!entry_handles::room_for(a.handle, max_entries, max_list_size)) return false;
    return post(wire::Op::PtlMEAppend, &a, sizeof a);
}

}  // namespace s4bxi::interpose::posted
