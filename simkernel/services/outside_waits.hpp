// Waits outside the simulation that a rank announces before entering them (PMIx calls of
// Open MPI, libinterpose/outside/pmix_waits.cpp), as pure logic. Unlike a wait the gate discovers
// by itself (blocked outside: it lets simulated time run, and the rank comes back at
// whatever date the simulation has reached), an announced wait is resolved in simulated
// terms, so that a run does not depend on how long the process manager takes in real time:
// - a local one (registering an event handler, PMIx_Finalize) completes without the other
//   ranks: the rank holds simulated time, as if it computed for no time;
// - a collective one (a fence) completes when every participant has entered it: until
//   then the rank does not hold time (the others may need it to reach the fence), and
//   from the last arrival on every participant holds it, so all leave at the date of
//   that arrival.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "run/outside_wait.hpp"

namespace s4bxi::sim {

// Successive fences over sets of ranks. The k-th fence a rank enters among a given set of
// participants is the k-th fence of every participant of that set.
class FenceBook {
public:
    struct Arrival {
        bool complete;        // this arrival completed the fence
        uint64_t fence;       // which fence of this set (1, 2, ...)
        size_t arrived;       // participants that have entered it, this rank included
    };
    // `participants` sorted, without duplicates, holding `rank`.
    Arrival arrive(int rank, const std::vector<int>& participants);

private:
    std::map<std::vector<int>, std::map<int, uint64_t>> entered_;  // per set: fences entered per rank
};

}  // namespace s4bxi::sim
