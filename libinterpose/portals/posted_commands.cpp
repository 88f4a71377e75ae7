#include "portals/posted_commands.hpp"

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime.hpp"
#include "s4bxi/mirror.hpp"

namespace s4bxi::interpose::posted {
namespace {

struct KnownNi {
    bool used = false;
    uint32_t inits = 0;  // PtlNIInit calls not yet matched by a PtlNIFini, as the server counts them
    uint32_t options = 0;
    ptl_ni_limits_t limits{};
    std::vector<ptl_process_t> map;  // logical NIs, once PtlSetMap succeeded
};

struct KnownMd {
    uint32_t ni = 0;
    uint32_t options = 0;
    uint64_t length = 0;
    bool has_eq = false;
    bool has_ct = false;
};

// Written by whichever thread makes the calls above, read by the simulated thread.
std::mutex g_mutex;
int g_inits = 0;
KnownNi g_nis[4];
std::unordered_map<uint32_t, KnownMd> g_mds;
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
}

void md_bound(uint32_t md, uint32_t ni, const ptl_md_t& description)
{
    std::lock_guard lock(g_mutex);
    g_mds[md] = KnownMd{ni_index(ni), description.options, description.length, description.eq_handle != PTL_EQ_NONE,
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

bool try_post(wire::Op op, const wire::DataArgs& a)
{
    if (!on_simulated_thread()) return false;
    {
        std::lock_guard lock(g_mutex);
        if (g_inits <= 0) return false;  // PTL_NO_INIT
        auto found = g_mds.find(a.md);
        if (found == g_mds.end()) return false;
        const KnownMd& m = found->second;
        const KnownNi& n = g_nis[m.ni];
        if (!n.used) return false;
        // An I/O vector's length is its entries, its bytes the server's to count; a
        // volatile MD's payload is the caller's again when the call returns (the server
        // copies it at the call, and may move it by PIO).
        if (m.options & (PTL_IOVEC | PTL_MD_VOLATILE)) return false;
        if (a.local_offset > m.length || a.length > m.length - a.local_offset) return false;
        if (a.length > n.limits.max_msg_size) return false;
        if (op == wire::Op::PtlPut) {
            if (a.ack_req > PTL_OC_ACK_REQ) return false;
            if (a.ack_req == PTL_ACK_REQ && !m.has_eq) return false;
            if (a.ack_req == PTL_CT_ACK_REQ && !m.has_ct) return false;
        } else if (op != wire::Op::PtlGet) {
            return false;
        }
        if (a.pt_index > static_cast<uint32_t>(n.limits.max_pt_index)) return false;
        uint32_t nid;
        if (!target_nid(n, a.target, nid) || !g_reached_nids.count(nid)) return false;
    }
    return post(op, &a, sizeof a);
}

}  // namespace s4bxi::interpose::posted
