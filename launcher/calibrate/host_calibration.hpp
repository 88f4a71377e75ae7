// What this host's cores do natively (launcher/calibrate/host_calibration.c, run as
// s4bxi-calibrate): the flop/s of one core on a reference kernel, and what the MPI
// library's calls cost on a warm core. Measured once per host and cached outside the
// clone (docs/time.md "The MPI library's code"), under a lock so that concurrent launches
// measure once, on a quiet host.
#pragma once

#include <optional>
#include <string>

namespace s4bxi::launcher {

struct HostCalibration {
    double flops = 0.0;    // flop/s of one core on the reference kernel
    std::string mpi_costs;  // the MPI library's costs, as S4BXI_MPI_COST_TABLE gives them to the ranks
    std::string source;    // where it comes from: the cache file, or "measured now"
};

// The calibration of this host: from the cache, unless `fresh`, else measured by `tool`
// and cached. Returns nothing, with `error` saying why, when the tool cannot run.
std::optional<HostCalibration> host_calibration(const std::string& tool, bool fresh, std::string& error);

// Reads the tool's output ("flops=...", "mpi=..."); nothing when it is malformed.
std::optional<HostCalibration> parse_calibration(const std::string& text);

}  // namespace s4bxi::launcher
