// Moving payload bytes from one rank's memory to another's. The server cannot copy
// between two other processes in one step, so the bytes pass through one buffer of its
// own, reused from copy to copy: a payload costs one cross-memory read and one write,
// never an allocation of its size.
#pragma once

#include <cstdint>

#include "services/rank_region.hpp"

namespace s4bxi::sim {

bool copy_between_ranks(const RankRegion& from, uint64_t from_offset, const RankRegion& to, uint64_t to_offset,
                        uint64_t length);

}  // namespace s4bxi::sim
