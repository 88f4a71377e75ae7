// A region of a rank's memory as Portals sees it: contiguous bytes, or an I/O vector
// (PTL_IOVEC: `start` is then the address of a ptl_iovec_t array of `count` entries).
// Offsets are logical: byte k of the region is byte k of the concatenated vector.
#pragma once

#include <cstdint>
#include <optional>

namespace s4bxi::sim {

struct RankRecord;

struct RankRegion {
    RankRecord* rank = nullptr;  // whose memory
    uint64_t start = 0;
    uint64_t count = 0;  // bytes (contiguous) or iovec entries
    bool iovec = false;
};

// Total bytes of the region, or nothing if its vector cannot be read.
std::optional<uint64_t> region_bytes(const RankRegion& region);

bool read_region(const RankRegion& region, uint64_t offset, void* out, uint64_t length);
bool write_region(const RankRegion& region, uint64_t offset, const void* data, uint64_t length);

// The address of logical byte `offset` (for the `start` field of events).
uint64_t region_address(const RankRegion& region, uint64_t offset);

}  // namespace s4bxi::sim
