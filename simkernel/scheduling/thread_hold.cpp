#include "scheduling/thread_hold.hpp"

#include <algorithm>

#include "calls/portals_engine.hpp"
#include "run/registry.hpp"

namespace s4bxi::sim {
namespace {

// Requests served under one hold with no work found and no command made, after which it
// ends: a holder may be waiting for the others (a thread that spins on a lock held by one
// that polls), and would otherwise hold simulated time for ever. A holder goes on to its
// next call within a few.
constexpr uint32_t kRequestsUnderHold = 64;

bool take(std::vector<pid_t>& tids, pid_t tid)
{
    auto found = std::find(tids.begin(), tids.end(), tid);
    if (found == tids.end()) return false;
    tids.erase(found);
    return true;
}

void add(std::vector<pid_t>& tids, pid_t tid)
{
    if (std::find(tids.begin(), tids.end(), tid) == tids.end()) tids.push_back(tid);
}

}  // namespace

void hold_at_dispatch(RankRecord& r)
{
    const wire::Request& request = r.request;
    r.answered_free = false;
    r.free_empty_poll = request.other_thread && take(r.free_polls, request.tid);
    r.dispatched_holder = false;
    if (r.holders.empty()) return;
    if (!request.other_thread || ++r.requests_under_hold > kRequestsUnderHold) {
        end_hold(r);  // the simulated thread is back, or the holders wait for the others
        r.phase = RankPhase::BlockedOutside;
        return;
    }
    r.dispatched_holder = take(r.holders, request.tid);
    if (!r.holders.empty()) {
        r.free_empty_poll = true;  // the others hold time: it cannot pass for this poll
        return;
    }
    r.phase = RankPhase::BlockedOutside;  // the simulated thread's, under the hold
}

void hold_after_request(RankRecord& r, const wire::Request& request, bool found_work)
{
    if (request.lockstep) return;
    if (found_work) add(r.free_polls, request.tid);
    bool held = !r.holders.empty();
    if (!held && r.phase != RankPhase::BlockedOutside) return;
    // The thread goes on with its own code, as the simulated thread does after a reply:
    // after work found, after a command (a call that is no poll: it is on its way to
    // its next), and after its own poll answered at once. Not after an empty poll that
    // waited in the simulation, nor after one answered at once because another held.
    bool command = !loop_call(static_cast<wire::Op>(request.op));
    if (found_work || command) r.requests_under_hold = 0;
    if (!found_work && !command && !(r.dispatched_holder && r.answered_free)) return;
    add(r.holders, request.tid);
    if (held) return;
    r.phase = RankPhase::Computing;
    r.asleep_since_wall = -1.0;
}

void end_hold(RankRecord& r)
{
    r.holders.clear();
    r.requests_under_hold = 0;
}

}  // namespace s4bxi::sim
