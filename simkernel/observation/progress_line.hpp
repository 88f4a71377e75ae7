// The progress line on a terminal (--progress, which the launcher gives when its stderr is
// a terminal and it is not quiet): after two seconds of wall time, one line updated four
// times a second: the simulated time reached, Portals operations per second, and how many
// ranks compute, wait in the simulation, or are blocked outside it.
#pragma once

namespace s4bxi::sim::observe {

void enable_progress_line();
// Called by the gate at each round, with the wall clock (seconds).
void progress_tick(double wall_now);
// Erases the line (the summary follows).
void progress_done();

}  // namespace s4bxi::sim::observe
