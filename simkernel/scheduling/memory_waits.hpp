// Waiting on memory under the zero CPU model (docs/time.md "Waiting on memory"). An
// OpenSHMEM program waits for a remote write by reading its own memory, with no Portals
// call in between (shmem_test, shmem_wait_until in threaded mode). Under the zero CPU
// model its computation takes no simulated time, so a rank in such a loop would hold
// simulated time for ever and the write would never land. A rank the rule applies to
// (--memory-waits) that uses kMemoryWaitCpu of CPU time with no request is taken to wait on
// its memory: it stops holding simulated time, which runs until the next write into its
// memory; from that instant it holds time again, and either makes a request there (its
// wait saw the write) or, after another kMemoryWaitCpu, waits again, for the next write.
// The dates are those of the writes: the same from run to run.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "scheduling/registry.hpp"

namespace s4bxi::sim {

// CPU time a rank may compute with no request before it is taken to wait on its memory.
inline constexpr uint64_t kMemoryWaitCpuNs = 5'000'000;

// Under the zero CPU model, for a computing rank the rule applies to, given its simulated
// thread's CPU time now: true when it waits on its memory (it then does not hold time).
bool waits_on_memory(RankRecord& rank, uint64_t cpu_now_ns);

// The rank made a request of its simulated thread: whatever it waited for, it is over.
void memory_wait_over(RankRecord& rank);

// The simulated NIC writes into the memory of process `pid` (a payload, an atomic's
// result): before the bytes, the clock of a rank of it that waits on its memory reads this
// date (a rank that sees the bytes must read their date); returns that rank, or nullptr.
RankRecord* memory_write_begins(pid_t pid);

// After the bytes: the rank returned by memory_write_begins() holds time again from this
// instant, and the gate is woken to see it.
void memory_write_landed(RankRecord& rank);

}  // namespace s4bxi::sim
