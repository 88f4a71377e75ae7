// Another thread of a rank holds the rank's simulated time (docs/time.md "On which threads").
//
// While the rank's simulated thread is blocked outside the simulation (in pthread_join,
// as OSU's osu_latency_mt and SOS's threaded tests wait for the threads that communicate),
// nothing held simulated time: the thread that received a message answered it at whatever
// date the simulation had run on to meanwhile, often the next event of the network (the
// acknowledgement of the message it was answering), and an 8-byte exchange between threads
// took twice osu_latency's. Now a thread holds the rank's time after its request found
// work (an event, a new count) or made a command (a call that is no poll), as the
// simulated thread does after a reply, until its own next request, which is dated where
// the last one ended. Meanwhile the empty polls of the rank's other threads are answered
// at once, and so is a thread's first after it found work (a polling loop goes round once
// more after an event), since time does not move for them to wait. A thread whose poll
// waits in the simulation holds nothing: it waits.
// A holder that makes no request is one the gate finds blocked outside, as it finds the
// simulated thread (update_cpu_progress()), and the hold ends.
#pragma once

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

struct RankRecord;

// The rank's next request is being dispatched (RankRecord::request): the holder's, or the
// simulated thread's, ends the hold; another thread's is served under it.
void hold_at_dispatch(RankRecord& r);

// Another thread's request was served; `found_work`: its poll found work.
void hold_after_request(RankRecord& r, const wire::Request& request, bool found_work);

// The gate found the rank blocked outside: no thread holds its time any more.
void end_hold(RankRecord& r);

}  // namespace s4bxi::sim
