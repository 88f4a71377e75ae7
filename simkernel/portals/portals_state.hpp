// Portals 4 objects as the simulated NIC holds them: per rank, NIs with their portal
// tables, MDs, list entries, event queues and counters; per node, the NICs' queues.
#pragma once

#include <portals4.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

#include "platform/platform.hpp"
#include "portals/counter.hpp"
#include "portals/event_queue.hpp"
#include "portals/matching.hpp"
#include "services/rank_region.hpp"

namespace s4bxi::sim {

struct RankRecord;
struct RankPortals;
struct Transfer;

enum class HandleKind : uint32_t { NI = 0, EQ = 1, CT = 2, MD = 3, ME = 4, LE = 5 };
constexpr uint32_t kHandleIndexBits = wire::kHandleIndexBits;
constexpr uint32_t kHandleIndexMask = wire::kHandleIndexMask;
inline uint32_t make_handle(HandleKind kind, uint32_t index)
{
    return (static_cast<uint32_t>(kind) << kHandleIndexBits) | index;
}
inline HandleKind handle_kind(uint32_t handle)
{
    return static_cast<HandleKind>(handle >> kHandleIndexBits);
}
inline uint32_t handle_index(uint32_t handle)
{
    return handle & kHandleIndexMask;
}

struct MemoryDescriptor {
    bool used = false;
    uint32_t ni = 0;
    uint64_t start = 0;   // or the address of its ptl_iovec_t array (PTL_IOVEC)
    uint64_t length = 0;  // bytes, whatever the layout
    uint32_t options = 0;
    uint32_t eq = PTL_EQ_NONE;
    uint32_t ct = PTL_CT_NONE;
    uint64_t iov_count = 0;  // PTL_IOVEC: entries of the array

    RankRegion region(RankRecord& rank) const
    {
        bool iovec = options & PTL_IOVEC;
        return RankRegion{&rank, start, iovec ? iov_count : length, iovec};
    }
};

struct ListEntry {
    uint32_t handle = PTL_INVALID_HANDLE;
    uint32_t ni = 0;
    uint32_t pt_index = 0;
    ptl_list_t list = PTL_PRIORITY_LIST;
    EntryCriteria criteria;
    uint64_t start = 0;      // or the address of its ptl_iovec_t array (PTL_IOVEC)
    uint64_t iov_count = 0;  // PTL_IOVEC: entries of the array; criteria.length is in bytes
    uint32_t ct = PTL_CT_NONE;
    uint64_t min_free = 0;
    uint64_t user_ptr = 0;
    uint32_t uid = PTL_UID_ANY;  // who may access it
    bool linked = false;
    bool pending_append = false;  // made by PtlTriggeredMEAppend, linked when its trigger fires
    // Overflow entries: unexpected headers still pointing into this entry's buffer, and
    // whether it was automatically unlinked with its events on, so that AUTO_FREE is due
    // once the last of them is claimed (the buffer is then the program's again).
    uint32_t headers = 0;
    bool free_pending = false;

    RankRegion region(RankRecord& rank) const
    {
        bool iovec = criteria.options & PTL_IOVEC;
        return RankRegion{&rank, start, iovec ? iov_count : criteria.length, iovec};
    }
};
using ListEntryPtr = std::shared_ptr<ListEntry>;

// A message that landed in an overflow-list entry, remembered until a priority entry
// appended later (or a search) claims it. `event` is its overflow event, ready to send.
struct UnexpectedHeader {
    ptl_event_t event;
    Incoming source;  // match bits and initiator, to match later entries against
    ListEntryPtr from;  // the overflow entry holding its data, kept until AUTO_FREE is decided
};

struct PortalTableEntry {
    bool allocated = false;
    bool enabled = false;
    uint32_t options = 0;
    uint32_t eq = PTL_EQ_NONE;
    std::list<ListEntryPtr> priority;
    std::list<ListEntryPtr> overflow;
    std::deque<UnexpectedHeader> unexpected;
};

struct NetworkInterface {
    bool used = false;
    uint32_t index = 0;  // 0..3: (matching, physical) combination
    uint32_t inits = 0;  // PtlNIInit calls not yet matched by a PtlNIFini
    uint32_t options = 0;
    uint32_t pid = 0;
    ptl_ni_limits_t limits{};
    // The program asked for a max_volatile_size: larger Puts from volatile MDs are refused
    // (otherwise the limit is reported only, docs/model.md "NI limits").
    bool volatile_limit = false;
    std::vector<PortalTableEntry> table;
    // Headers in all its PTs' unexpected lists, which flow control counts against
    // max_unexpected_headers at every overflow match: kept, not summed over the table.
    size_t unexpected_total = 0;
    simgrid::s4u::SemaphorePtr command_slots;  // the NIC command queue depth
    std::vector<ptl_process_t> map;             // logical NIs: rank -> (nid, pid)
    // Its reverse, built with it by PtlSetMap: (nid, pid) -> the first rank naming that
    // process. Every message to a logical NI looks its initiator up there.
    std::unordered_map<uint64_t, uint32_t> rank_in_map;
    ptl_sr_value_t status[PTL_SR_LAST] = {};    // PtlNIStatus registers
    RankPortals* owner = nullptr;
    bool matching() const { return options & PTL_NI_MATCHING; }
    static uint64_t process_key(uint32_t nid, uint32_t pid) { return (static_cast<uint64_t>(nid) << 32) | pid; }
    // The rank of process (nid, pid) in the map, if the map names it.
    std::optional<uint32_t> rank_of(uint32_t nid, uint32_t pid) const
    {
        auto it = rank_in_map.find(process_key(nid, pid));
        if (it == rank_in_map.end()) return std::nullopt;
        return it->second;
    }
};

struct RankPortals {
    RankRecord* rank = nullptr;
    uint32_t nid = 0;
    simgrid::s4u::Host* host = nullptr;  // the rank's core
    simgrid::s4u::ActorPtr proxy;
    int init_count = 0;
    NetworkInterface nis[4];
    std::vector<EventQueue> eqs;
    std::vector<Counter> cts;
    std::vector<MemoryDescriptor> mds;
    std::vector<ListEntryPtr> entries;  // by handle index; null when unlinked
    // Anything that may interest a waiting proxy (event queued, counter changed).
    simgrid::s4u::MutexPtr mutex;
    simgrid::s4u::ConditionVariablePtr activity;
    // PtlAbort calls acted upon: every blocking wait in progress (the one being served and
    // the parked ones) returns PTL_INTERRUPTED, each seeing the count move past what it
    // was when its call began. A flag, taken by the first wait that woke, interrupted
    // only that one.
    uint64_t aborts = 0;
    double poll_quantum = 0.0;  // current fast-forward step of empty polls
    uint64_t work_found = 0;    // polls and waits that found work (poll_found_work())
    double idle_since = -1.0;   // start of the current run of empty polls (< 0: none)
    // The rank's last Portals request to the server was an empty poll or a search that
    // found nothing, with no other call since: it goes round a polling or probing loop.
    bool probing = false;
    // The deadline of the empty poll the proxy waits in (< 0: none), which the gate keeps,
    // and whether the gate ended that poll.
    double poll_until = -1.0;
    bool poll_ended = false;
    // The proxy is in its wait (timed or not) rather than still on its way to it: until it
    // is, the gate cannot tell whether the poll will set a timeout of its own (an event
    // already queued but visible later), so it is no stall yet.
    bool waiting = false;
    // Arrivals (events written, counters changed), with the date the last one becomes
    // visible: an empty poll's fast-forward ends when anything arrives for the rank, in
    // any queue, since the polling loop would notice it on its next round.
    uint64_t arrivals = 0;
    double last_arrival_visible_at = 0.0;
    // Of which events, and how many there had been when the rank last read its queues
    // (kept in the mirror when there is one, since the rank reads them locally too).
    uint64_t events = 0;
    double last_event_visible_at = 0.0;
    uint64_t events_looked = 0;
    uint64_t triggers_registered = 0;
    // The mirror of its queues and counters in the rank's memory (null in unit tests),
    // and how many of the rank's calls it had answered at the rank's last request.
    wire::Mirror* mirror = nullptr;
    uint64_t local_reads_seen = 0;
    uint64_t local_polls_with_work_seen = 0;

    // The mirror of the queue or counter at this handle index (null: not mirrored), and
    // the reply count its writes are stamped with.
    wire::EqMirror* eq_mirror(uint32_t index) const
    {
        return mirror && index < wire::kMirroredEqs ? &mirror->eqs[index] : nullptr;
    }
    wire::CtMirror* ct_mirror(uint32_t index) const
    {
        return mirror && index < wire::kMirroredCts ? &mirror->cts[index] : nullptr;
    }
    const std::atomic<uint64_t>* replies() const { return mirror ? &mirror->replies : nullptr; }

    // Its Puts whose payload the NIC reads from its memory when they land (nic_model.hpp,
    // Transfer::payload_at_delivery). A program that releases the MD, the NI or the
    // library, or ends, before their SEND gets them read at that instant instead.
    std::vector<std::weak_ptr<Transfer>> payloads_in_memory;
    size_t payloads_in_memory_pruned = 0;  // their number after the last pruning
};

// An entry leaves its list (PtlMEUnlink, a use-once entry used, a triggered unlink): a
// PtlTriggeredMEAppend still pending never happens; its handle slot becomes free.
void unlink_entry(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry);
// The entry's handle slot, if it still holds this entry, becomes free.
void release_handle(RankPortals& owner, const ListEntryPtr& entry);
// The entry at this index is gone: its slot is free, and the rank may choose it again once
// it has had a reply (wire::EntrySlot).
void forget_entry(RankPortals& owner, uint32_t index);

// The rank of the process on one of its NIs (PtlGetId on a logical NI): its index in the
// NI's map (PtlSetMap), which need not follow the launcher's order; without a map naming
// it, its launcher rank.
uint32_t own_rank(const RankPortals& p, const NetworkInterface& ni);

}  // namespace s4bxi::sim
