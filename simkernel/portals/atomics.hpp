// Portals atomic operations applied to real memory: every element, every datatype the
// specification allows for the operation.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "s4bxi/atomic_rules.hpp"
#include "services/rank_region.hpp"

namespace s4bxi::sim {

using s4bxi::datatype_size;
using s4bxi::operation_allowed;

// Applies `op` element by element: target[i] = target[i] op operand[i]. `compare` is the
// swap operand (CSWAP*, MSWAP); may be null otherwise. Pure: unit-tested.
bool apply_atomic_buffer(uint32_t op, uint32_t datatype, unsigned char* target, const unsigned char* operand,
                         const unsigned char* compare, size_t length);

// The same on the target rank's memory, with the operand already captured. With a
// `fetch` region, the old target value is first written there at `fetch_offset`.
bool apply_atomic(uint32_t op, uint32_t datatype, const unsigned char* operand, const RankRegion& target,
                  uint64_t target_offset, uint64_t length, const unsigned char* compare, const RankRegion* fetch,
                  uint64_t fetch_offset);

}  // namespace s4bxi::sim
