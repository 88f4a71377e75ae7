#include "services/rank_region.hpp"

#include <portals4.h>

#include <vector>

#include "services/rank_memory.hpp"

namespace s4bxi::sim {
namespace {

constexpr uint64_t kMaxIovecEntries = 1 << 20;

bool read_vector(const RankRegion& region, std::vector<ptl_iovec_t>& vector)
{
    if (region.count > kMaxIovecEntries) return false;
    vector.resize(region.count);
    return region.count == 0 ||
           read_rank_memory(*region.rank, region.start, vector.data(), region.count * sizeof(ptl_iovec_t));
}

// Calls `visit(address, bytes, position)` for each contiguous piece of [offset, offset+length).
template <class Visit>
bool for_each_piece(const RankRegion& region, uint64_t offset, uint64_t length, Visit visit)
{
    if (!region.iovec) {
        if (offset > region.count || length > region.count - offset) return false;
        return length == 0 || visit(region.start + offset, length, 0);
    }
    std::vector<ptl_iovec_t> vector;
    if (!read_vector(region, vector)) return false;
    uint64_t position = 0;
    for (const ptl_iovec_t& piece : vector) {
        if (length == 0) break;
        if (offset >= piece.iov_len) {
            offset -= piece.iov_len;
            continue;
        }
        uint64_t take = std::min<uint64_t>(piece.iov_len - offset, length);
        if (!visit(reinterpret_cast<uint64_t>(piece.iov_base) + offset, take, position)) return false;
        position += take;
        length -= take;
        offset = 0;
    }
    return length == 0;
}

}  // namespace

std::optional<uint64_t> region_bytes(const RankRegion& region)
{
    if (!region.iovec) return region.count;
    std::vector<ptl_iovec_t> vector;
    if (!read_vector(region, vector)) return std::nullopt;
    uint64_t total = 0;
    for (const ptl_iovec_t& piece : vector) total += piece.iov_len;
    return total;
}

bool read_region(const RankRegion& region, uint64_t offset, void* out, uint64_t length)
{
    auto* bytes = static_cast<unsigned char*>(out);
    return for_each_piece(region, offset, length, [&](uint64_t address, uint64_t size, uint64_t position) {
        return read_rank_memory(*region.rank, address, bytes + position, size);
    });
}

bool write_region(const RankRegion& region, uint64_t offset, const void* data, uint64_t length)
{
    const auto* bytes = static_cast<const unsigned char*>(data);
    return for_each_piece(region, offset, length, [&](uint64_t address, uint64_t size, uint64_t position) {
        return write_rank_memory(*region.rank, address, bytes + position, size);
    });
}

uint64_t region_address(const RankRegion& region, uint64_t offset)
{
    if (!region.iovec) return region.start + offset;
    uint64_t found = 0;
    for_each_piece(region, offset, 1, [&](uint64_t address, uint64_t, uint64_t) {
        found = address;
        return true;
    });
    return found;
}

}  // namespace s4bxi::sim
