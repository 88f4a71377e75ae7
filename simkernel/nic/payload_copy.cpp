#include "nic/payload_copy.hpp"

#include <algorithm>
#include <memory>

#include "context.hpp"
#include "scheduling/memory_waits.hpp"
#include "scheduling/rank_throttle.hpp"
#include "services/rank_delivery.hpp"

namespace s4bxi::sim {
namespace {

// Large enough for a copy to cost two system calls up to this size, small enough that the
// server does not keep the largest payload ever seen.
constexpr uint64_t kChunkBytes = 4 << 20;

bool within(const RankRegion& region, uint64_t offset, uint64_t length)
{
    return offset <= region.count && length <= region.count - offset;
}

// One copy, by the delivery thread of the rank written to (rank_delivery.hpp): for a
// large payload between two contiguous regions of two ranks.
bool copy_once(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
               uint64_t length)
{
    if (copy_once_from() == 0 || length < copy_once_from() || from.iovec || to.iovec || from.pid == to.pid ||
        !within(from, from_offset, length) || !within(to, to_offset, length))
        return false;
    for (auto& rank : context().registry.ranks()) {
        if (rank->pid != to.pid || !rank->slot.object) continue;
        // As for the server's own writes (rank_memory.cpp): the date first, then the bytes,
        // then a rank waiting on its memory holds time again (memory_waits.hpp). If the
        // order fails, the two-copy path that follows does the same.
        resume_rank(*rank);  // its delivery thread copies, and the server waits for it
        RankRecord* waiting = memory_write_begins(to.pid);
        if (!order_delivery(*rank->slot.object, to.pid, from.pid, from.start + from_offset, to.start + to_offset,
                            length, rank->in_service && !rank->serving_posted))
            return false;
        if (waiting) memory_write_landed(*waiting);
        return true;
    }
    return false;
}

}  // namespace

bool copy_between_ranks(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                        uint64_t length)
{
    if (copy_once(from, from_offset, to, to_offset, length)) return true;
    // The simulation runs its actors one at a time and a copy never yields: one buffer serves all.
    static std::unique_ptr<unsigned char[]> buffer;
    static uint64_t capacity = 0;
    uint64_t chunk = std::min(length, kChunkBytes);
    if (chunk > capacity) {
        buffer = std::make_unique_for_overwrite<unsigned char[]>(chunk);
        capacity = chunk;
    }
    for (uint64_t done = 0; done < length; done += chunk) {
        uint64_t piece = std::min(chunk, length - done);
        if (!read_region(from, from_offset + done, buffer.get(), piece) ||
            !write_region(to, to_offset + done, buffer.get(), piece))
            return false;
    }
    return true;
}

}  // namespace s4bxi::sim
