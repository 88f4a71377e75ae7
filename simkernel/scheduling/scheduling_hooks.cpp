#include "scheduling/scheduling_hooks.hpp"

#include "run/scheduling_hooks.hpp"
#include "scheduling/gate.hpp"
#include "scheduling/memory_waits.hpp"
#include "scheduling/parked_waits.hpp"
#include "scheduling/rank_throttle.hpp"

namespace s4bxi::sim {

void install_scheduling_hooks()
{
    g_scheduling_hooks.wake_gate_for_poll = wake_gate_for_poll;
    g_scheduling_hooks.wake_gate_for_withdrawn_event = wake_gate_for_withdrawn_event;
    g_scheduling_hooks.park_if_needed = park_if_needed;
    g_scheduling_hooks.resume_rank = resume_rank;
    g_scheduling_hooks.memory_write_begins = memory_write_begins;
    g_scheduling_hooks.memory_write_landed = memory_write_landed;
}

}  // namespace s4bxi::sim
