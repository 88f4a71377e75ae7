// Under the measured CPU model, ranks that compute run on the host's cores at once, but
// simulated time advances only as far as the slowest of them has surely got (the gate's
// horizon). On a host with fewer cores than ranks, a rank that spins on its memory for a
// remote write (OpenSHMEM's shmem_test, shmem_wait_until) kept spinning while the ranks
// behind it waited for a core, and all that CPU time became simulated time: its clock ran
// ahead of the write it waited for by however unfair the host's scheduler was (SOS's
// c11_shmem_test_all_any_some on 8 ranks: 10 s of simulated time for a ring of 8-byte
// puts). A rank whose clock is more than kThrottleAhead past the horizon is stopped
// (SIGSTOP) until the horizon comes within half of that: its CPU time, and so its
// simulated dates, are the same, but it spins only while the write it waits for can
// still come, and the ranks behind it get the cores.
#pragma once

#include "run/registry.hpp"

namespace s4bxi::sim {

inline constexpr double kThrottleAhead = 1e-3;  // simulated seconds

// A computing rank whose next request can come at `date` at the earliest, given the
// gate's horizon: stops it if it is too far ahead, resumes it once it is not.
void throttle_if_ahead(RankRecord& rank, double date, double horizon);

// Resumes the rank if it was stopped: it no longer computes, or something is about to
// wait for one of its threads (its delivery thread copying a payload).
void resume_rank(RankRecord& rank);

}  // namespace s4bxi::sim
