#include "nic/payload_copy.hpp"

#include <algorithm>
#include <memory>

#include "registration/machine_link.hpp"
#include "run/memory_write.hpp"
#include "run/registry.hpp"
#include "run/scheduling_hooks.hpp"
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

// One copy, by the threads of the ranks (rank_delivery.hpp): for a large payload between
// two contiguous regions of two ranks of the server's machine (a rank reads another's
// memory only on its own machine; the ranks of other machines have no delivery thread yet:
// docs/multi-host.md).
bool copy_once(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
               uint64_t length)
{
    if (copy_once_from() == 0 || length < copy_once_from() || from.iovec || to.iovec || from.rank == to.rank ||
        from.rank->machine || to.rank->machine || !within(from, from_offset, length) ||
        !within(to, to_offset, length))
        return false;
    RankRecord& target = *to.rank;
    RankRecord& source = *from.rank;
    if (!target.slot.object) return false;
    // As for the server's own writes (services/rank_memory.cpp): the date first, then the
    // bytes, then a rank waiting on its memory holds time again (scheduling/memory_waits.hpp).
    // If the order fails, the two-copy path that follows does the same.
    // Its threads copy, and the server waits for them (a source that copies half is in the
    // simulation: never stopped).
    g_scheduling_hooks.resume_rank(target);
    MemoryWrite write(target);
    auto in_service = [](const RankRecord& r) { return r.in_service && !r.serving_posted; };
    DeliverySide from_side{source.slot.object, &source.process(), source.pid, from.start + from_offset,
                           source.slot.object && in_service(source)};
    DeliverySide to_side{target.slot.object, &target.process(), target.pid, to.start + to_offset, in_service(target)};
    if (!order_delivery(from_side, to_side, length)) return false;
    write.landed();
    return true;
}

}  // namespace

// Between two ranks of other machines than the server's: the source's agent moves the
// bytes itself, to a rank of its machine or straight to the target's agent
// (docs/multi-host.md). Contiguous regions only; the others take the server's path.
bool moved_by_agents(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                     uint64_t length)
{
    if (!from.rank->machine || !to.rank->machine || from.iovec || to.iovec || !within(from, from_offset, length) ||
        !within(to, to_offset, length))
        return false;
    RankRecord& target = *to.rank;
    MemoryWrite write(target);  // as for the server's own writes (services/rank_memory.cpp)
    bool moved = from.rank->machine->move(from.rank->pid, from.start + from_offset, *target.machine, target.pid,
                                          to.start + to_offset, length);
    write.landed();
    return moved;
}

bool copy_between_ranks(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                        uint64_t length)
{
    if (copy_once(from, from_offset, to, to_offset, length)) return true;
    if (moved_by_agents(from, from_offset, to, to_offset, length)) return true;
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
