// A rank on another machine than the server's (docs/multi-host.md) has its channel memory
// (its slot, its mirror, its ring of MPI call records: wire.hpp, mirror.hpp,
// call_records.hpp) twice: in the shared memory the agent of its machine serves to the
// rank, and in a shadow the server serves as it serves a local rank's. Each side ships
// what it changed since the last exchange, and applies what the other side shipped.
//
// The rank and the server write different bytes, or the same bytes in turn (a request,
// then its reply; an event queue's tail, taken by the rank between requests and by the
// server during one), so the bytes that differ from the copy as last exchanged are this
// side's writes and nothing else. What a reader on the other side must see last is
// applied after the rest of a delta: an event queue's head after its events, a counter's
// values inside its seqlock, an entry's handle after its slot, the ring's head after its
// records, the slot's publishing words (posted_head, posted_served, parked_done) and, last
// of all, the slot's state.
//
// Not shipped: the futex bookkeeping of each side (Slot::sleepers, posted_sleepers) and
// the copy orders of the delivery thread (Slot::delivery), which serve one machine only.
//
// The scan covers the slot, the mirror's header, the event queues and counters up to the
// highest index in use (handles are allocated lowest index first, entries taken lowest
// slot first), and the ring of call records. A delta is a sequence of (offset, length,
// bytes) with 32-bit little-endian offsets and lengths.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "s4bxi/call_records.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::remote {

static_assert(offsetof(wire::Slot, sleepers) < offsetof(wire::Slot, posted_sleepers) &&
              offsetof(wire::Slot, posted_sleepers) < offsetof(wire::Slot, delivery));

// What a delta changed that the applying side must act on: wake the rank's threads
// waiting on these words (the agent), or ring the gate's doorbell (the server).
struct Applied {
    bool state = false;
    bool posted_served = false;
    bool parked_done = false;
    bool anything = false;
};

class ChannelSync {
public:
    static constexpr size_t kBytes = wire::kChannelWithRecordsBytes;

    // `channel`: the live channel memory (kBytes), zeroed or as the other side left it.
    explicit ChannelSync(uint8_t* channel) : live_(channel) {}

    // Appends to `delta` what changed in the live memory since the last exchange, and
    // takes it as exchanged. Returns the bytes appended.
    size_t collect(std::vector<uint8_t>& delta)
    {
        std::lock_guard<std::mutex> hold(mutex_);
        size_t before = delta.size();
        grow_limits();
        for (const Span& span : spans()) diff(span.offset, span.length, delta);
        return delta.size() - before;
    }

    // Applies a delta collected on the other side. False (and nothing applied) when it is
    // malformed: a range outside the channel, or a truncated one.
    bool apply(const uint8_t* delta, size_t size, Applied& applied)
    {
        if (!well_formed(delta, size)) return false;
        std::lock_guard<std::mutex> hold(mutex_);
        // A counter's values change inside its seqlock: odd while they are written.
        std::vector<uint32_t> counters;
        for_each_range(delta, size, [&](uint32_t offset, uint32_t length, const uint8_t*) {
            note_counters(offset, length, counters);
        });
        for (uint32_t index : counters)
            mirror().cts[index].version.store(copy_word<uint32_t>(version_offset(index)) | 1u, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        std::vector<Word> last;
        for_each_range(delta, size, [&](uint32_t offset, uint32_t length, const uint8_t* bytes) {
            place(offset, length, bytes, last);
            applied.anything = true;
        });
        for (uint32_t index : counters) {  // a counter opened afresh keeps its version: even again
            uint32_t offset = static_cast<uint32_t>(version_offset(index));
            if (std::none_of(last.begin(), last.end(), [offset](const Word& w) { return w.offset == offset; })) {
                Word w{offset, 4, {}};
                read_copy(offset, 4, w.bytes.data());
                last.push_back(w);
            }
        }
        std::sort(last.begin(), last.end(), publishes_before);
        for (const Word& word : last) {
            publish(word.offset, word.length, word.bytes.data());
            applied.state |= word.offset == offsetof(wire::Slot, state);
            applied.posted_served |= word.offset == offsetof(wire::Slot, posted_served);
            applied.parked_done |= word.offset == offsetof(wire::Slot, parked_done);
        }
        grow_limits();
        return true;
    }

    // Whether a delta is well formed (every range inside the channel, none truncated).
    static bool well_formed(const uint8_t* delta, size_t size)
    {
        for (size_t at = 0; at < size;) {
            if (size - at < 8) return false;
            uint32_t offset, length;
            std::memcpy(&offset, delta + at, 4);
            std::memcpy(&length, delta + at + 4, 4);
            if (length == 0 || offset >= kBytes || length > kBytes - offset || size - at - 8 < length) return false;
            at += 8 + length;
        }
        return true;
    }

private:
    static constexpr size_t kPage = 4096;
    using Page = std::array<uint8_t, kPage>;

    struct Span {
        size_t offset, length;
    };
    struct Word {  // a publishing word of a delta, written after the rest
        uint32_t offset, length;
        std::array<uint8_t, 8> bytes;
    };

    wire::Slot& slot() const { return *reinterpret_cast<wire::Slot*>(live_); }
    wire::Mirror& mirror() const { return wire::mirror_of(slot()); }

    static constexpr size_t eq_offset(uint32_t index)
    {
        return wire::kMirrorOffset + offsetof(wire::Mirror, eqs) + index * sizeof(wire::EqMirror);
    }
    static constexpr size_t ct_offset(uint32_t index)
    {
        return wire::kMirrorOffset + offsetof(wire::Mirror, cts) + index * sizeof(wire::CtMirror);
    }
    static constexpr size_t entry_offset(uint32_t index)
    {
        return wire::kMirrorOffset + offsetof(wire::Mirror, entries) + index * sizeof(wire::EntrySlot);
    }
    static constexpr size_t version_offset(uint32_t index) { return ct_offset(index) + offsetof(wire::CtMirror, version); }

    // The parts of the slot each side writes for the other: all of it but the futex
    // bookkeeping and the copy orders (in the order of the slot's fields).
    static std::vector<Span> slot_spans()
    {
        const Span left_out[] = {{offsetof(wire::Slot, sleepers), 4},
                                 {offsetof(wire::Slot, posted_sleepers), 4},
                                 {offsetof(wire::Slot, delivery), sizeof(wire::Delivery)}};
        std::vector<Span> spans;
        size_t start = 0;
        for (const Span& out : left_out) {
            if (out.offset > start) spans.push_back({start, out.offset - start});
            start = out.offset + out.length;
        }
        if (start < sizeof(wire::Slot)) spans.push_back({start, sizeof(wire::Slot) - start});
        return spans;
    }

    template <class Visit>
    static void for_each_range(const uint8_t* delta, size_t size, Visit visit)
    {
        for (size_t at = 0; at < size;) {
            uint32_t offset, length;
            std::memcpy(&offset, delta + at, 4);
            std::memcpy(&length, delta + at + 4, 4);
            visit(offset, length, delta + at + 8);
            at += 8 + length;
        }
    }

    std::vector<Span> spans() const
    {
        static const std::vector<Span> slot_parts = slot_spans();
        std::vector<Span> all = slot_parts;
        all.push_back({wire::kMirrorOffset, offsetof(wire::Mirror, eqs)});
        if (eq_limit_) all.push_back({eq_offset(0), eq_limit_ * sizeof(wire::EqMirror)});
        if (ct_limit_) all.push_back({ct_offset(0), ct_limit_ * sizeof(wire::CtMirror)});
        all.push_back({wire::kMirrorOffset + offsetof(wire::Mirror, entry_slots_used), 4});
        if (entry_limit_) all.push_back({entry_offset(0), entry_limit_ * sizeof(wire::EntrySlot)});
        // The ring's records change only before its head moves (the rank writes them, then
        // the head): 52 KB looked at only then, not at every exchange.
        size_t head = wire::kCallRecordsOffset + offsetof(wire::CallRecordRing, head);
        uint64_t live_head;
        std::memcpy(&live_head, live_ + head, sizeof live_head);
        size_t records = offsetof(wire::CallRecordRing, records);
        all.push_back({wire::kCallRecordsOffset,
                       live_head != copy_word<uint64_t>(head) ? sizeof(wire::CallRecordRing) : records});
        return all;
    }

    // Event queues and counters in use form a prefix of their arrays; so do entry slots.
    void grow_limits()
    {
        while (eq_limit_ < wire::kMirroredEqs && in_use(eq_offset(eq_limit_))) ++eq_limit_;
        while (ct_limit_ < wire::kMirroredCts && in_use(ct_offset(ct_limit_))) ++ct_limit_;
        uint32_t used = mirror().entry_slots_used.load(std::memory_order_acquire);
        entry_limit_ = std::max(entry_limit_, std::min<uint32_t>(used, wire::kMirroredEntries));
    }

    // A handle word (first of an EqMirror or a CtMirror) nonzero now or as last exchanged.
    bool in_use(size_t offset) const
    {
        uint32_t live;
        std::memcpy(&live, live_ + offset, 4);
        return live != 0 || copy_word<uint32_t>(offset) != 0;
    }

    template <class T>
    T copy_word(size_t offset) const
    {
        T value{};
        auto found = copy_.find(offset / kPage);
        if (found != copy_.end()) std::memcpy(&value, found->second->data() + offset % kPage, sizeof value);
        return value;
    }

    Page& copy_page(size_t index)
    {
        auto& page = copy_[index];
        if (!page) page = std::make_unique<Page>(Page{});
        return *page;
    }

    // Appends the ranges of [offset, offset + length) that differ from the copy. The live
    // bytes are read once, into `now`: a write of the other party's after that is seen by
    // the next collect.
    void diff(size_t offset, size_t length, std::vector<uint8_t>& delta)
    {
        while (length > 0) {
            size_t in_page = std::min(length, kPage - offset % kPage);
            uint8_t now[kPage];
            std::memcpy(now, live_ + offset, in_page);
            auto found = copy_.find(offset / kPage);
            static const Page zeros{};
            const uint8_t* before = (found != copy_.end() ? found->second->data() : zeros.data()) + offset % kPage;
            if (std::memcmp(now, before, in_page) != 0) {
                Page& page = copy_page(offset / kPage);
                for (size_t i = 0; i < in_page;) {
                    if (now[i] == before[i]) {
                        ++i;
                        continue;
                    }
                    size_t end = i + 1;
                    // Runs closer than a range header are sent as one.
                    while (end < in_page && (now[end] != before[end] || (end + 8 < in_page && std::memcmp(now + end, before + end, 8) != 0)))
                        ++end;
                    append(delta, offset + i, now + i, end - i);
                    i = end;
                }
                std::memcpy(page.data() + offset % kPage, now, in_page);
            }
            offset += in_page;
            length -= in_page;
        }
    }

    static void append(std::vector<uint8_t>& delta, size_t offset, const uint8_t* bytes, size_t length)
    {
        uint32_t header[2] = {static_cast<uint32_t>(offset), static_cast<uint32_t>(length)};
        const auto* raw = reinterpret_cast<const uint8_t*>(header);
        delta.insert(delta.end(), raw, raw + 8);
        delta.insert(delta.end(), bytes, bytes + length);
    }

    // The publishing word containing `offset`, as (start, length), or length 0.
    static std::pair<size_t, size_t> publishing_word(size_t offset)
    {
        auto slot_word = [offset](size_t start, size_t length) {
            return offset >= start && offset < start + length;
        };
        for (size_t start : {offsetof(wire::Slot, state), offsetof(wire::Slot, posted_head),
                             offsetof(wire::Slot, posted_served), offsetof(wire::Slot, parked_done)})
            if (slot_word(start, 4)) return {start, 4};
        size_t ring_head = wire::kCallRecordsOffset + offsetof(wire::CallRecordRing, head);
        if (slot_word(ring_head, 8)) return {ring_head, 8};
        size_t eqs = eq_offset(0), cts = ct_offset(0), entries = entry_offset(0);
        if (offset >= eqs && offset < eqs + wire::kMirroredEqs * sizeof(wire::EqMirror)) {
            size_t head = eqs + (offset - eqs) / sizeof(wire::EqMirror) * sizeof(wire::EqMirror) +
                          offsetof(wire::EqMirror, head);
            if (slot_word(head, 8)) return {head, 8};
        } else if (offset >= cts && offset < cts + wire::kMirroredCts * sizeof(wire::CtMirror)) {
            size_t version = cts + (offset - cts) / sizeof(wire::CtMirror) * sizeof(wire::CtMirror) +
                             offsetof(wire::CtMirror, version);
            if (slot_word(version, 4)) return {version, 4};
        } else if (offset >= entries && offset < entries + wire::kMirroredEntries * sizeof(wire::EntrySlot)) {
            size_t handle = entries + (offset - entries) / sizeof(wire::EntrySlot) * sizeof(wire::EntrySlot) +
                            offsetof(wire::EntrySlot, handle);
            if (slot_word(handle, 4)) return {handle, 4};
        }
        return {0, 0};
    }

    // The slot's words after the mirror's, the state last.
    static bool publishes_before(const Word& a, const Word& b)
    {
        auto rank = [](const Word& w) {
            if (w.offset == offsetof(wire::Slot, state)) return 3;
            if (w.offset < wire::kMirrorOffset) return 2;
            return 1;
        };
        return rank(a) != rank(b) ? rank(a) < rank(b) : a.offset < b.offset;
    }

    void note_counters(size_t offset, size_t length, std::vector<uint32_t>& counters) const
    {
        size_t cts = ct_offset(0), end = cts + wire::kMirroredCts * sizeof(wire::CtMirror);
        size_t from = std::max(offset, cts), to = std::min(offset + length, end);
        for (size_t at = from; at < to; at = cts + ((at - cts) / sizeof(wire::CtMirror) + 1) * sizeof(wire::CtMirror)) {
            auto index = static_cast<uint32_t>((at - cts) / sizeof(wire::CtMirror));
            if (counters.empty() || counters.back() != index) counters.push_back(index);
        }
    }

    // Copies the range into the copy, and into the live memory but for its publishing
    // words, which go to `last` (whole words: a delta may change some of their bytes).
    void place(size_t offset, size_t length, const uint8_t* bytes, std::vector<Word>& last)
    {
        for (size_t i = 0; i < length;) {
            auto [word, word_length] = publishing_word(offset + i);
            if (word_length == 0) {
                size_t run = 1;
                while (i + run < length && publishing_word(offset + i + run).second == 0) ++run;
                write_copy(offset + i, run, bytes + i);
                std::memcpy(live_ + offset + i, bytes + i, run);
                i += run;
                continue;
            }
            size_t inside = std::min(word + word_length, offset + length) - (offset + i);
            write_copy(offset + i, inside, bytes + i);
            Word w{static_cast<uint32_t>(word), static_cast<uint32_t>(word_length), {}};
            auto found = std::find_if(last.begin(), last.end(), [&](const Word& x) { return x.offset == w.offset; });
            if (found == last.end()) {
                last.push_back(w);
                found = last.end() - 1;
            }
            read_copy(word, word_length, found->bytes.data());  // the whole word, as now shipped
            i += inside;
        }
    }

    void write_copy(size_t offset, size_t length, const uint8_t* bytes)
    {
        while (length > 0) {
            size_t in_page = std::min(length, kPage - offset % kPage);
            std::memcpy(copy_page(offset / kPage).data() + offset % kPage, bytes, in_page);
            offset += in_page;
            bytes += in_page;
            length -= in_page;
        }
    }

    void read_copy(size_t offset, size_t length, uint8_t* into) const
    {
        for (size_t i = 0; i < length; ++i) into[i] = copy_word<uint8_t>(offset + i);
    }

    // A publishing word, written whole with a release store (4 or 8 bytes, aligned).
    void publish(size_t offset, size_t length, const uint8_t* bytes)
    {
        if (length == 8) {
            uint64_t value;
            std::memcpy(&value, bytes, 8);
            reinterpret_cast<std::atomic<uint64_t>*>(live_ + offset)->store(value, std::memory_order_release);
        } else {
            uint32_t value;
            std::memcpy(&value, bytes, 4);
            reinterpret_cast<std::atomic<uint32_t>*>(live_ + offset)->store(value, std::memory_order_release);
        }
    }

    uint8_t* live_;
    std::unordered_map<size_t, std::unique_ptr<Page>> copy_;  // as last exchanged, by page
    uint32_t eq_limit_ = 0;
    uint32_t ct_limit_ = 0;
    uint32_t entry_limit_ = 0;
    std::mutex mutex_;
};

}  // namespace s4bxi::remote
