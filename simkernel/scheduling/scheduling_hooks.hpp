// What scheduling/ does for the layers below it, which cannot include it: the gate's
// wake-ups, parked waits, resumed ranks, writes into a waiting rank's memory.
#pragma once

namespace s4bxi::sim {

// Fills run/scheduling_hooks.hpp with this folder's functions; the server calls it before
// the simulation starts.
void install_scheduling_hooks();

}  // namespace s4bxi::sim
