// A stand-in for the layers below the code under test (libinterpose/rank/, channel/ and
// time/virtual_clock): their API with a fake virtual clock the tests drive, and a record of
// what was asked of the server.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "channel/channel_client.hpp"
#include "rank/clock_ledger.hpp"
#include "rank/rank_state.hpp"
#include "time/virtual_clock.hpp"

namespace stub {

extern bool rank;           // is_rank()
extern pid_t simulated_tid; // on_simulated_thread() is true on this thread only
extern double now;          // virtual_now(); simulated_sleep() advances it
extern double epoch;        // virtual_epoch()
extern std::string node;    // node_name()
extern std::vector<double> sleeps;  // every simulated_sleep(), in order
extern int yields;          // simulated_yield() count
extern int report_fd;       // call(Backtrace) writes the TextArgs text here when >= 0
extern std::vector<uint32_t> outside_waits;  // the kind of every call(OutsideWait), in order
// threads_clock_offset(): virtual_now() on the simulated thread sets it from `now` and the
// host's CLOCK_MONOTONIC, as the runtime does; tests may set it directly.
extern std::atomic<int64_t> threads_offset;

// virtual_now() on the simulated thread, as the runtime's reading (publishes the offset).
double virtual_now_and_publish();

// Back to a rank on the calling thread at simulated time 0.
void reset();

}  // namespace stub
