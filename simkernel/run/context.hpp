// What the server's parts share during a run: configuration, ranks, outcome.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "channel/channel_server.hpp"
#include "observation/timeline.hpp"
#include "s4bxi/wire.hpp"
#include "run/registry.hpp"
#include "host/process_memory.hpp"

namespace s4bxi::sim {

struct Config {
    std::string run_dir;
    int world_size = 0;  // 0: learned from the first rank
    int ppn = 1;
    std::string platform_file;  // empty: the built-in default platform
    wire::CpuModel cpu_model = wire::CpuModel::Measured;
    double cpu_factor = 1.0;
    double cpu_threshold = 1e-9;
    std::vector<int> service_ranks;  // ranks on the service VNs
    std::string log_level = "warning";
    std::string summary_out;
    observe::Options observation;  // --timeline, --paje, --timeline-filter
    int ready_fd = -1;
    double register_timeout = 60.0;     // wall seconds for every rank to register
    double blocked_window = 0.02;       // wall seconds without CPU progress = blocked outside
    double outside_deadlock_timeout = 300.0;  // wall seconds a blocked-outside rank may hold everyone
    double epoch = 1700000000.0;        // CLOCK_REALTIME at simulated time 0
    // Rules of the zero CPU model, for which ranks: Auto, OpenSHMEM programs only.
    enum class ForRanks { Auto, On, Off };
    // May a rank that computes without Portals calls be waiting on its memory
    // (memory_waits.hpp)?
    ForRanks memory_waits = ForRanks::Auto;
    // May the threads of a rank run in lockstep (libinterpose/threads/)?
    ForRanks lockstep = ForRanks::Auto;
    // Whether `rule` applies to a rank (`openshmem`: the program is an OpenSHMEM one).
    bool applies(ForRanks rule, bool openshmem) const
    {
        return cpu_model == wire::CpuModel::Zero && (rule == ForRanks::On || (rule == ForRanks::Auto && openshmem));
    }
};

// How the run ended. The first failure recorded wins.
struct Outcome {
    std::string status = "ok";  // ok, rank-crash, deadlock, registration-timeout, error
    std::string message;
    int exit_code = 0;
    int abort_status = -1;  // status "abort": the status a rank gave PMI_Abort

    bool failed() const { return status != "ok"; }
    void fail(std::string kind, std::string text, int code)
    {
        if (failed()) return;
        status = std::move(kind);
        message = std::move(text);
        exit_code = code;
    }
};

// Exit codes of s4bxi-simkernel (documented in docs/usage.md).
inline constexpr int kExitRankCrash = 10;
inline constexpr int kExitDeadlock = 11;
inline constexpr int kExitRegistration = 12;
inline constexpr int kExitConfig = 13;
inline constexpr int kExitInterrupted = 14;
// A rank called PMI_Abort: the run ends, and the launcher exits with the rank's status
// (Outcome::abort_status, in the summary).
inline constexpr int kExitRankAbort = 15;

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
