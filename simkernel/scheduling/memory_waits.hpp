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

#include "run/registry.hpp"

namespace s4bxi::sim {

// CPU time a rank may compute with no request before it is taken to wait on its memory,
// when it is in an OpenSHMEM wait or calls OpenSHMEM tests (wire::Slot::memory_polls)...
inline constexpr uint64_t kMemoryWaitCpuNs = 5'000'000;
// ... and when it is in none: it may be waiting by plain reads of its memory, or computing
// over memory it has touched already (SOS's bigput checks 16 MiB it received; test: a
// rank waiting on its memory sees each write at its date, whose rank computes 20 ms of
// CPU while a write is on its way).
inline constexpr uint64_t kMemoryWaitByReadsCpuNs = 50'000'000;

// Under the zero CPU model, for a computing rank the rule applies to, given its simulated
// thread's CPU time now: true when it waits on its memory (it then does not hold time).
bool waits_on_memory(RankRecord& rank, uint64_t cpu_now_ns);

// The threads of a rank in lockstep all spin on its memory (wire::Op::LockstepIdle): it
// waits for the next write into it.
void lockstep_threads_wait_on_memory(RankRecord& rank);

// The rank's threads go into lockstep (a lockstep request of its), or out of it (a request
// of its simulated thread alone): the writes into its memory are counted while they are in
// (RankRecord::memory_writes).
void set_lockstep(RankRecord& rank, bool on);

// The rank made a request of its simulated thread: whatever it waited for, it is over.
void memory_wait_over(RankRecord& rank);

// The simulated thread has its reply (or its parked wait's result), not published yet: its
// budget starts from its own reading of its CPU clock after it, once the slot holds it.
void memory_budget_restarts(RankRecord& rank);

// A write into the rank's memory begins (run/memory_write.hpp): if it waits on its memory,
// it reads the write's date from now on, and is returned.
RankRecord* memory_write_begins(RankRecord& rank);
// The bytes of that write are there: the rank that waited holds time again.
void memory_write_landed(RankRecord* waiting);

}  // namespace s4bxi::sim
