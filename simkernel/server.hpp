// The server's life: platform, registration of every rank, simulation, summary.
#pragma once

#include "run/context.hpp"

namespace s4bxi::sim {

// Returns the process exit status (0, or one of the kExit* codes of run/outcome.hpp).
int run_server(Config config);

}  // namespace s4bxi::sim
