// SimGrid resource models that the server never gives an action, left out of the
// engine's scheduling rounds.
#pragma once

#include <string>
#include <vector>

namespace s4bxi::sim {

// Called once the platform is built, before the engine runs. Returns the names of the
// models left out.
std::vector<std::string> leave_out_unused_models();

}  // namespace s4bxi::sim
