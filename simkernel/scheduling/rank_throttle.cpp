#include "scheduling/rank_throttle.hpp"

#include <signal.h>

#include <xbt/log.h>

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_throttle, "Ranks stopped while they run ahead of simulated time");

namespace s4bxi::sim {

void throttle_if_ahead(RankRecord& r, double date, double horizon)
{
    if (!r.throttled && date > horizon + kThrottleAhead) {
        if (r.process().send_signal(r.pid, SIGSTOP)) {
            r.throttled = true;
            XBT_DEBUG("rank %d stopped: at %.9f s, the horizon at %.9f s", r.rank, date, horizon);
        }
    } else if (r.throttled && date <= horizon + kThrottleAhead / 2) {
        resume_rank(r);
    }
}

void resume_rank(RankRecord& r)
{
    if (!r.throttled) return;
    r.throttled = false;
    r.process().send_signal(r.pid, SIGCONT);
    XBT_DEBUG("rank %d resumed", r.rank);
}

}  // namespace s4bxi::sim
