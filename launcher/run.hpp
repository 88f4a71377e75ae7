// One simulated run: the private run directory, the server, the command or the ranks, their
// supervision, the final clean-up and the summary.
#pragma once

#include <optional>
#include <string>

#include "options.hpp"
#include "paths.hpp"

namespace s4bxi::launcher {

// Exit statuses of the launcher itself (the others come from the command or the server).
inline constexpr int kExitUsage = 2;             // bad options, program or platform file
inline constexpr int kExitTimeout = 124;         // --timeout expired
inline constexpr int kExitLauncherFailure = 125; // the launcher could not run the simulation
// The server's status when a rank died before finishing (simkernel/run/outcome.hpp).
inline constexpr int kServerExitRankCrash = 10;
inline constexpr int kServerExitRankAbort = 15;  // a rank called PMI_Abort: its status is in the summary

// Wall-clock limits of the run protocol, in seconds.
inline constexpr double kServerReadyTimeout = 30;  // server start until its socket listens
inline constexpr double kServerExitGrace = 10;     // command ended -> server exits by itself
// Command failed -> server exits by itself: its ranks ended (it notices within
// milliseconds), or some never registered (it would wait for them).
inline constexpr double kFailedCommandServerGrace = 2;
inline constexpr double kServerTermGrace = 5;      // SIGTERM -> SIGKILL of the server
inline constexpr double kCommandGrace = 10;        // server ended cleanly -> command exits by itself
inline constexpr double kInterruptGrace = 5;       // forwarded SIGINT/SIGTERM -> SIGKILL
// The server reported a rank's death while the command runs -> the command (mpirun,
// stopping the other ranks after an MPI_Abort or a failed rank) exits by itself.
inline constexpr double kRankFailureGrace = 5;

struct RunPlan {
    Options options;
    std::string program;  // resolved path of options.command[0]
    Siblings siblings;
    std::optional<std::string> platform;  // absolute path, when one was given
    // The MPI library's costs handed to the ranks (S4BXI_MPI_COST_TABLE; empty: its measured
    // CPU time is charged) and where they come from (docs/time.md "The MPI library's code").
    std::string mpi_cost_table;
    std::string mpi_cost_source;
};

// Runs the whole protocol and returns the launcher's exit status. `environment` is the
// launcher's environment (environ).
int run(const RunPlan& plan, char** environment);

}  // namespace s4bxi::launcher
