// Moving payload bytes from one rank's memory to another's. The server cannot copy
// between two other processes in one step: a large payload between contiguous regions is
// copied by the receiving rank's delivery thread, once (services/rank_delivery.hpp);
// otherwise, or when that fails, the bytes pass through one buffer of the server's,
// reused from copy to copy: one cross-memory read and one write, never an allocation of
// the payload's size.
#pragma once

#include <cstdint>

#include "services/rank_region.hpp"

namespace s4bxi::sim {

bool copy_between_ranks(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                        uint64_t length);

}  // namespace s4bxi::sim
