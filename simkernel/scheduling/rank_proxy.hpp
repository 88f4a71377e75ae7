// One proxy actor per rank, on the rank's simulated core: it injects the rank's measured
// compute, performs each request in simulated time and replies.
#pragma once

namespace s4bxi::sim {

struct RankRecord;

void rank_proxy(RankRecord* rank);

}  // namespace s4bxi::sim
