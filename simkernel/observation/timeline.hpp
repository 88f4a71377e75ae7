// What a run looked like, rank by rank (docs/observability.md): the timeline
// (--timeline, Chrome trace-event JSON), the same in Paje (--paje), and the figures the
// summary adds: the communication matrix, the MPI calls per function, the time blocked.
//
// The simulation calls the hooks below; they change nothing in it. With no timeline and no
// Paje file, a hook costs a test, except the matrix and the MPI totals, which are counted
// always (a map update per message, a drain of the rank's ring per request).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "run/config.hpp"
#include "s4bxi/network_schedule.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;
struct Transfer;
struct Message;

namespace observe {

// Opens the files (throws std::runtime_error when one cannot be written).
void open(const Options& options);
// True when a timeline or a Paje file is written.
bool enabled();
// Ends every track at `end` and closes the files.
void close(double end);

// A rank registered: its track, and whether its library records every MPI call.
void rank_registered(RankRecord& rank);
// The proxy took a request of the rank: the rank computed from `compute_start` to
// `compute_end` (equal under the zero CPU model), then made the request. Drains the
// rank's MPI records.
void request_dispatched(RankRecord& rank, const wire::Request& request, double compute_start, double compute_end);
// The proxy replies to the request (or the rank finished with it).
void request_served(RankRecord& rank, const wire::Request& request, int rc, bool finished);
// A data operation (Put, Get, Atomic, FetchAtomic, Swap; triggered or not) leaves `rank`.
void message_issued(const RankRecord& rank, const Transfer& transfer);
// A request message reached its target NIC, which matches it and writes its event.
void message_landed(const Message& message);

// The network model runs from `at` on (the run's first model at 0 too): the timeline's
// counter track.
void network_model_changed(netmodel::Model model, double at);

// The summary's additions: "communication" (matrix), "mpi" (calls per function per rank),
// and per rank "wait_time" and "mpi_time" (added to the `ranks` array by rank).
void add_to_summary(nlohmann::json& summary);

}  // namespace observe
}  // namespace s4bxi::sim
