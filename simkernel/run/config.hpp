// How the server was asked to run: the command line the launcher gives (main.cpp).
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

namespace observe {

// What observation/ is asked to write: part of the run's configuration, which every layer
// may read, hence here rather than beside the timeline.
struct Options {
    std::string timeline_file;  // Chrome trace-event JSON ("": none)
    std::string paje_file;      // Paje ("": none)
    std::vector<int> ranks;     // ranks to show (empty: all)
    double window_start = 0.0;  // simulated seconds
    double window_end = std::numeric_limits<double>::infinity();
};

}  // namespace observe

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
    std::string listen;  // ADDR[:PORT]: a listener for ranks of other machines (docs/multi-host.md)
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

}  // namespace s4bxi::sim
