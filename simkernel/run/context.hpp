// What the server's parts share during a run: configuration, ranks, outcome.
#pragma once

#include <atomic>

#include <simgrid/s4u.hpp>

#include "channel/channel_server.hpp"
#include "host/process_memory.hpp"
#include "run/config.hpp"
#include "run/outcome.hpp"
#include "run/registry.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

extern std::atomic<bool> g_terminate_requested;

struct Context {
    Config config;
    Registry registry;
    SharedObject<wire::Doorbell> doorbell;
    Outcome outcome;
    simgrid::s4u::SemaphorePtr gate_wakeup;  // released by proxies when their rank runs again
    double wall_start = 0.0;
    HostLoad host_load_at_start;  // for the summary: what else the host was doing
};

Context& context();

}  // namespace s4bxi::sim
