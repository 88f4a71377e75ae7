// Payloads really move: the simulated NIC reads and writes rank memory directly, through
// the access of the rank's machine (host/process_access.hpp), at the simulated instant the
// model says.
#pragma once

#include <cstdint>

namespace s4bxi::sim {

struct RankRecord;

bool read_rank_memory(const RankRecord& rank, uint64_t address, void* buffer, uint64_t length);
bool write_rank_memory(RankRecord& rank, uint64_t address, const void* buffer, uint64_t length);
// Memory of the interposer's in the rank (a parked wait's result): no write of the
// program's, so no wait on memory ends with it.
bool write_interposer_memory(const RankRecord& rank, uint64_t address, const void* buffer, uint64_t length);

}  // namespace s4bxi::sim
