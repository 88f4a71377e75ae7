// The MPI calls of a rank, seen through the MPI profiling interface: the library defines
// MPI_* and calls the next definition (libmpi's, or another profiling tool's), recording
// each call's simulated interval (s4bxi/call_records.hpp).
#pragma once

namespace s4bxi::interpose::mpi {

// Writes the rank's totals per function into the ring, for the server to read with the
// Finalize request that follows. Nothing when the rank made no MPI call.
void write_totals();

}  // namespace s4bxi::interpose::mpi
