// What a rank's Portals state looks like, for deadlock and timeout reports: the events
// waiting in its queues, its disabled portal table entries, its list lengths.
#pragma once

#include <string>

#include "portals/portals_state.hpp"

namespace s4bxi::sim {

// One line per NI in use, each starting with "\n    "; empty when nothing is worth telling.
std::string describe_portals_state(const RankPortals& portals);

}  // namespace s4bxi::sim
