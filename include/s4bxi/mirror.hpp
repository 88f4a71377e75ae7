// Mirrors of a rank's event queues and counters, in the memory the rank shares with the
// server right after its slot (docs/design.md "Polling"): a PtlEQGet that finds an event, or a
// PtlCTGet that finds a new value, is answered in the rank's process without a round trip.
// Part of the contract of wire.hpp: bump wire::kVersion on any change.
//
// Determinism. A rank reads locally the state as of its last reply, never a write the
// server made after it: that one would be seen or not depending on real time. Every write
// carries a stamp, the number of replies the rank had been given when it was made, and the
// rank ignores stamps equal to its current count. A round trip still sees everything, so
// nothing is lost; only the answer that needs no server moves to the rank. A counter keeps
// its value as of the last reply beside its newest one for the same reason.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "s4bxi/wire.hpp"

namespace s4bxi::wire {

// Portals handles are a kind in the top bits and an index below: mirrors are by index.
inline constexpr uint32_t kHandleIndexBits = 29;
inline constexpr uint32_t kHandleIndexMask = (1u << kHandleIndexBits) - 1;

inline constexpr uint32_t kMirroredEqs = 2048;  // EQ handle indexes mirrored (nic.limit_caps allow 2046)
inline constexpr uint32_t kMirroredCts = 2048;  // CT handle indexes mirrored
inline constexpr uint32_t kEqWindow = 64;       // events of a queue mirrored at once: its oldest

struct MirroredEvent {
    double visible_at;  // simulated time from which the rank may see it
    uint64_t stamp;     // replies given to the rank when it was written
    uint8_t event[kEventBytes];
};

struct alignas(64) EqMirror {
    std::atomic<uint32_t> handle;  // the queue's handle while it is allocated, else 0
    uint32_t reserved;
    // An event was lost because the queue was full: the stamp of the loss + 1 (0: none).
    // The next event taken reports PTL_EQ_DROPPED.
    std::atomic<uint64_t> dropped;
    std::atomic<uint64_t> head;     // events written into the window (by the server)
    std::atomic<uint64_t> tail;     // events consumed (by the rank locally, or by the server)
    MirroredEvent window[kEqWindow];
};

struct CounterValue {
    std::atomic<uint64_t> success;
    std::atomic<uint64_t> failure;
    std::atomic<uint64_t> stamp;
};

struct alignas(64) CtMirror {
    std::atomic<uint32_t> handle;   // the counter's handle while it is allocated, else 0
    std::atomic<uint32_t> version;  // seqlock: odd while the server writes
    CounterValue newest;
    CounterValue at_reply;  // the newest value stamped before the current reply count
    // What the rank's last PtlCTGet returned: a poll that reads it again is empty.
    std::atomic<uint64_t> last_read_success;
    std::atomic<uint64_t> last_read_failure;
};

// The handles of a rank's list entries (docs/time.md "Posted commands"). The rank chooses
// the handle of each ME or LE it appends, so that an append can be posted without waiting
// for the server to answer it: it takes the lowest slot it knows to be free, writes the
// handle there, and the server adopts it. The server frees the slot when the entry goes (an
// unlink, a use-once entry consumed, PtlNIFini), stamped like any write to the mirror: the
// rank sees the slot free only from the first reply after the free, so the handles it
// chooses are the same from one run to the next.
inline constexpr uint32_t kMirroredEntries = 16384;  // nic.limit_caps allow 16319 entries

struct EntrySlot {
    // The entry's handle from the rank's choice until the server frees it; 0 when free.
    std::atomic<uint32_t> handle;
    uint32_t ni;        // NI index (0..3) and portal table entry of the append, as the rank
    uint32_t pt_index;  // asked it: what the rank counts lists' lengths by
    uint32_t reserved;
    // The reply count from which the rank may see the slot free (the free's stamp + 1).
    std::atomic<uint64_t> free_from;
};

struct Mirror {
    std::atomic<uint64_t> replies;      // replies the server has given the rank
    std::atomic<uint64_t> local_reads;  // Portals calls the rank answered from the mirror
    // Of which polls that found work (an event, a new PtlCTGet value): the server's empty
    // polls start their fast-forward afresh after one, as after its own (docs/design.md "Polling").
    std::atomic<uint64_t> local_polls_with_work;
    // Events written for the rank, and the date the last of them becomes visible, as of
    // its last reply; and the count when the rank last read its event queues. An empty
    // poll while an event the rank has not looked at yet is visible returns at once, free
    // (docs/design.md "Polling": the polling loop would find it on its next round).
    std::atomic<uint64_t> events_at_reply;
    std::atomic<double> last_event_visible_at_reply;
    std::atomic<uint64_t> events_looked;
    EqMirror eqs[kMirroredEqs];
    CtMirror cts[kMirroredCts];
    // Slots of `entries` the rank has ever taken (written by the rank alone).
    std::atomic<uint32_t> entry_slots_used;
    EntrySlot entries[kMirroredEntries];
};

static_assert(std::is_standard_layout_v<Mirror>);
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<double>::is_always_lock_free);

// The channel memory of a rank: its slot, then its mirror. The memory starts zeroed (a
// fresh memfd): an all-zero mirror is a valid empty one, and its pages are only allocated
// when written.
inline constexpr size_t kMirrorOffset = 8192;  // after the slot and its ring of posted commands
inline constexpr size_t kChannelBytes = kMirrorOffset + ((sizeof(Mirror) + 4095) / 4096) * 4096;
static_assert(sizeof(Slot) <= kMirrorOffset);

inline Mirror& mirror_of(Slot& slot)
{
    return *reinterpret_cast<Mirror*>(reinterpret_cast<char*>(&slot) + kMirrorOffset);
}

// ---------------------------------------------------------------------------------------
// The rank's side. It runs while the server writes; `replies` is the mirror's count, which
// does not change while the rank runs.

// The oldest event of the queue the rank may take at simulated time `now`, or null.
inline const MirroredEvent* readable_event(const EqMirror& q, uint32_t handle, uint64_t replies, double now)
{
    if (handle == 0 || q.handle.load(std::memory_order_acquire) != handle) return nullptr;
    uint64_t tail = q.tail.load(std::memory_order_relaxed);
    if (q.head.load(std::memory_order_acquire) == tail) return nullptr;
    const MirroredEvent& event = q.window[tail % kEqWindow];
    if (event.stamp >= replies || event.visible_at > now) return nullptr;
    return &event;
}

// After reading the event readable_event() gave: the server may reuse its place. Returns
// true when the event is the first after a loss the rank may know of (PTL_EQ_DROPPED).
inline bool consume_event(EqMirror& q, uint64_t replies)
{
    q.tail.store(q.tail.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    uint64_t dropped = q.dropped.load(std::memory_order_acquire);
    if (dropped == 0 || dropped - 1 >= replies) return false;
    // The server writes it only when it is 0, so this cannot hide a newer loss.
    q.dropped.store(0, std::memory_order_release);
    return true;
}

// The counter's value as of the rank's last reply, if the counter is this handle's.
inline bool readable_counter(const CtMirror& c, uint32_t handle, uint64_t replies, uint64_t& success,
                             uint64_t& failure)
{
    if (handle == 0 || c.handle.load(std::memory_order_acquire) != handle) return false;
    while (true) {
        uint32_t before = c.version.load(std::memory_order_acquire);
        if (before & 1) {
            __builtin_ia32_pause();
            continue;
        }
        const CounterValue& value = c.newest.stamp.load(std::memory_order_relaxed) < replies ? c.newest : c.at_reply;
        success = value.success.load(std::memory_order_relaxed);
        failure = value.failure.load(std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (c.version.load(std::memory_order_relaxed) == before) return true;
    }
}

// True when the slot is free as of the rank's reply count `replies`: the server never
// held it, or freed it before that reply.
inline bool entry_slot_free(const EntrySlot& e, uint64_t replies)
{
    return e.handle.load(std::memory_order_acquire) == 0 && e.free_from.load(std::memory_order_relaxed) <= replies;
}

// ---------------------------------------------------------------------------------------
// The server's side.

// The entry in the slot is gone; `replies` counts the replies given to the rank.
inline void free_entry_slot(EntrySlot& e, uint64_t replies)
{
    e.free_from.store(replies + 1, std::memory_order_relaxed);
    e.handle.store(0, std::memory_order_release);
}

inline void open_counter(CtMirror& c, uint32_t handle, uint64_t replies)
{
    c.handle.store(0, std::memory_order_release);
    for (CounterValue* value : {&c.newest, &c.at_reply}) {
        value->success.store(0, std::memory_order_relaxed);
        value->failure.store(0, std::memory_order_relaxed);
        value->stamp.store(replies, std::memory_order_relaxed);
    }
    c.last_read_success.store(0, std::memory_order_relaxed);
    c.last_read_failure.store(0, std::memory_order_relaxed);
    c.handle.store(handle, std::memory_order_release);
}

inline void write_counter(CtMirror& c, uint64_t success, uint64_t failure, uint64_t replies)
{
    uint32_t version = c.version.load(std::memory_order_relaxed);
    c.version.store(version + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    if (c.newest.stamp.load(std::memory_order_relaxed) < replies) {
        c.at_reply.success.store(c.newest.success.load(std::memory_order_relaxed), std::memory_order_relaxed);
        c.at_reply.failure.store(c.newest.failure.load(std::memory_order_relaxed), std::memory_order_relaxed);
        c.at_reply.stamp.store(c.newest.stamp.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
    c.newest.success.store(success, std::memory_order_relaxed);
    c.newest.failure.store(failure, std::memory_order_relaxed);
    c.newest.stamp.store(replies, std::memory_order_relaxed);
    c.version.store(version + 2, std::memory_order_release);
}

}  // namespace s4bxi::wire
