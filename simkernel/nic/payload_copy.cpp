#include "nic/payload_copy.hpp"

#include <algorithm>
#include <memory>

namespace s4bxi::sim {
namespace {

// Large enough for a copy to cost two system calls up to this size, small enough that the
// server does not keep the largest payload ever seen.
constexpr uint64_t kChunkBytes = 4 << 20;

}  // namespace

bool copy_between_ranks(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                        uint64_t length)
{
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
