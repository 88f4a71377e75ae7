// What the layers below scheduling/ tell the gate, or need scheduling/ to do, without
// including it: the NIC and the Portals calls are served by the proxies and watched by the
// gate that scheduling/ holds, above them. scheduling/ installs its functions here before
// the simulation starts (install_scheduling_hooks, scheduling/scheduling_hooks.hpp); until
// then a hook does nothing, as the gate is not there to be told.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;
struct ParkTicket;

// Bumped by every simulated actor each time it does something; lets the gate tell a
// quiet simulation from one whose actors are still running at the current date.
inline uint64_t g_sim_activity = 0;

struct SchedulingHooks {
    // An empty poll began: the gate, if it waits for the next event, must look at its
    // deadline (scheduling/gate.hpp).
    void (*wake_gate_for_poll)() = [] {};
    // An event the gate may be waiting for was withdrawn (scheduling/gate.hpp).
    void (*wake_gate_for_withdrawn_event)() = [] {};
    // A parkable wait is about to block: park it if it must (scheduling/parked_waits.hpp).
    void (*park_if_needed)(RankRecord& rank, const wire::Request& request, ParkTicket& ticket) =
        [](RankRecord&, const wire::Request&, ParkTicket&) {};
    // Resume the rank if the gate stopped it (scheduling/rank_throttle.hpp).
    void (*resume_rank)(RankRecord& rank) = [](RankRecord&) {};
    // A write into the memory of the rank begins, then its bytes are there
    // (run/memory_write.hpp; scheduling/memory_waits.hpp has the rules).
    RankRecord* (*memory_write_begins)(RankRecord& rank) = [](RankRecord&) -> RankRecord* { return nullptr; };
    void (*memory_write_landed)(RankRecord* waiting) = [](RankRecord*) {};
};

inline SchedulingHooks g_scheduling_hooks;

}  // namespace s4bxi::sim
