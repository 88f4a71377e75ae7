// Serves the announcements of waits outside the simulation (wire::Op::OutsideWait, see
// outside_waits.hpp): records each rank's state for the gate, and the fences' arrivals.
#pragma once

#include <string>

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;

// Returns the reply code (0). The announcement costs no simulated time.
int announce_outside_wait(RankRecord& rank, const wire::OutsideWaitArgs& args);

// The rank posted its next request: whatever it waited for outside is over.
void end_outside_wait(RankRecord& rank);

// For deadlock reports: what the rank waits for outside, or "".
std::string describe_outside_wait(const RankRecord& rank);

}  // namespace s4bxi::sim
