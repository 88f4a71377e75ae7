#include "time/threads_clock.hpp"

#include <portals4.h>

#include <atomic>

#include "rank/clock_ledger.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/time_math.hpp"

namespace s4bxi::interpose::threads_clock {
namespace {

// The latest reply to any of the rank's threads that make calls (other than the
// simulated one): its simulated date and the host's CLOCK_MONOTONIC when it came, under
// a sequence lock (odd while written). The latest, not the thread's own: a thread that
// spins on a lock while another one calls would otherwise go on from its own old reply.
std::atomic<uint64_t> g_sequence{0};
std::atomic<int64_t> g_sim_ns{0};
std::atomic<int64_t> g_wall_ns{0};

// Whether the calling thread has made calls: initial-exec, as a clock read may come from
// a signal handler.
__attribute__((tls_model("initial-exec"))) thread_local bool t_anchored = false;

bool timed_out(wire::Op op, int32_t rc)
{
    switch (op) {
    case wire::Op::PtlEQPoll: return rc == PTL_EQ_EMPTY;
    case wire::Op::PtlCTPoll: return rc == PTL_CT_NONE_REACHED;
    default: return false;
    }
}

}  // namespace

void replied(wire::Op op, int32_t rc, double sim_time, bool parked)
{
    if (parked && timed_out(op, rc)) return;
    int64_t sim_ns = timemath::seconds_to_ns(sim_time);
    int64_t wall_ns = host_monotonic_ns();
    g_sequence.fetch_add(1, std::memory_order_acq_rel);
    g_sim_ns.store(sim_ns, std::memory_order_relaxed);
    g_wall_ns.store(wall_ns, std::memory_order_relaxed);
    g_sequence.fetch_add(1, std::memory_order_release);
    t_anchored = true;
}

int64_t now_ns(int64_t host_ns)
{
    if (!t_anchored) return timemath::other_thread_virtual_ns(host_ns, threads_clock_offset());
    int64_t sim_ns, wall_ns;
    uint64_t before;
    do {
        before = g_sequence.load(std::memory_order_acquire);
        sim_ns = g_sim_ns.load(std::memory_order_relaxed);
        wall_ns = g_wall_ns.load(std::memory_order_relaxed);
    } while ((before & 1) || g_sequence.load(std::memory_order_acquire) != before);
    return timemath::calling_thread_virtual_ns(host_ns, sim_ns, wall_ns);
}

}  // namespace s4bxi::interpose::threads_clock
