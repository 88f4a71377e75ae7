#include "scheduling/memory_waits.hpp"

#include <cstring>

#include <simgrid/s4u.hpp>

#include "run/context.hpp"
#include "calls/portals_engine.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_memory_waits, "Ranks waiting on their memory");

namespace s4bxi::sim {

namespace {

int g_memory_waiters = 0;  // ranks taken to wait on their memory now
int g_counted_ranks = 0;   // ranks whose writes are counted (in lockstep)

// The rank's CPU time when its budget began: its last reply, or the last write into its
// memory or page fault seen since, whichever is later.
uint64_t budget_base(const RankRecord& r)
{
    return std::max(r.slot.object->cpu_at_reply_ns.load(std::memory_order_acquire), r.memory_budget_base_ns);
}

}  // namespace

bool waits_on_memory(RankRecord& r, uint64_t cpu_now_ns)
{
    if (r.waits_on_memory) return true;
    // With no list entry linked, no remote write can land in its memory: it computes (an
    // OpenSHMEM program setting up its symmetric heap before it exposes it). Taking it to
    // wait would let simulated time run past messages on their way to entries it has yet to
    // append, dropped then retransmitted seconds later.
    if (!r.memory_waits || !exposes_memory(r)) return false;
    if (r.reply_reading_due) {
        if (r.slot.object->cpu_at_reply_ns.load(std::memory_order_acquire) == r.reply_reading_before) return false;
        r.reply_reading_due = false;
    }
    uint64_t base = budget_base(r);
    // A budget spent taking page faults went to computing: a loop that reads the same
    // words waiting for a write takes none, a program filling memory it has not touched
    // yet (a fresh array of the symmetric heap) takes one per page or huge page. Taken to
    // wait, such a rank let simulated time run to a write that reached it while it
    // computed, and made its next call at that date or at its own, as the host's speed
    // had it (SOS's bigput on 4 ranks). The budget starts again after faults; the gate
    // must have seen a whole budget's faults, from a look at its beginning.
    const wire::Slot& slot = *r.slot.object;
    bool first_look = r.memory_fault_window != base;
    if (first_look) {
        r.memory_fault_window = base;
        r.memory_fault_mark = r.thread_cpu.page_faults();
        r.memory_poll_mark = slot.memory_polls.load(std::memory_order_relaxed);
    }
    if (cpu_now_ns < base + kMemoryWaitCpuNs) return false;
    // A first look has just read the count (a /proc read): the budget starts there.
    if (uint64_t faults = first_look ? r.memory_fault_mark : r.thread_cpu.page_faults();
        first_look || faults != r.memory_fault_mark) {
        r.memory_budget_base_ns = cpu_now_ns;
        r.memory_fault_window = budget_base(r);
        r.memory_fault_mark = faults;
        r.memory_poll_mark = slot.memory_polls.load(std::memory_order_relaxed);
        return false;
    }
    // In an OpenSHMEM wait, or calling its tests since the gate first looked: the program
    // says it waits on its memory. Otherwise it may be checking what it received (a loop
    // over memory it has touched takes no page fault either), and only a longer budget
    // tells a wait by plain reads from such a computation.
    bool polls = slot.memory_waits_open.load(std::memory_order_relaxed) != 0 ||
                 slot.memory_polls.load(std::memory_order_relaxed) != r.memory_poll_mark;
    if (!polls && cpu_now_ns < base + kMemoryWaitByReadsCpuNs) return false;
    XBT_DEBUG("rank %d waits on its memory at %.9f s%s", r.rank, simgrid::s4u::Engine::get_clock(),
              polls ? "" : " (by plain reads)");
    r.waits_on_memory = true;
    ++r.host_decisions.memory_waits;
    if (!polls) ++r.host_decisions.memory_waits_by_reads;
    ++g_memory_waiters;
    return true;
}

void lockstep_threads_wait_on_memory(RankRecord& r)
{
    if (r.waits_on_memory) return;
    r.waits_on_memory = true;
    ++g_memory_waiters;
}

void set_lockstep(RankRecord& r, bool on)
{
    if (r.lockstep == on) return;
    r.lockstep = on;
    g_counted_ranks += on ? 1 : -1;
}

void memory_wait_over(RankRecord& r)
{
    if (!r.waits_on_memory) return;
    r.waits_on_memory = false;
    --g_memory_waiters;
}

// The rank's own reading of its CPU clock after a reply (wire::Slot::cpu_at_reply_ns) comes
// only when its thread runs again. Until then the gate, which sees a computing rank, counted
// the call's CPU time against the budget: a payload the thread copied while it waited (16
// MB of SOS's bigget, 12 ms of CPU) made a rank that had just come back from its call look
// like one that had spun for the whole budget, in the runs where the gate looked before the
// thread ran. It then waited on its memory, and its next call came at the date of the next
// write into it instead of its own. The budget is not judged until that reading is there.
// The server's own reading of the thread's CPU time at the reply, which stood in for it
// before, lags for a thread that runs (the kernel brings schedstat up to date at its ticks:
// a thread spinning for its reply read up to a tick low, 10 ms at 100 Hz), and a thread
// the host descheduled right after its reply could look like one that had spun for the
// whole budget all the same.
void memory_budget_restarts(RankRecord& r)
{
    if (!r.memory_waits) return;
    r.reply_reading_due = true;
    r.reply_reading_before = r.slot.object->cpu_at_reply_ns.load(std::memory_order_acquire);
}

RankRecord* memory_write_begins(RankRecord& r)
{
    if (g_memory_waiters == 0 && g_counted_ranks == 0) return nullptr;
    if (r.lockstep) ++r.memory_writes;
    if (!r.waits_on_memory) return nullptr;
    // Its clock reads the date of the write, as after a reply: the server sets it as it
    // does for the sleeps it answers on the rank's behalf (wire::Slot).
    double date = simgrid::s4u::Engine::get_clock();
    uint64_t bits;
    std::memcpy(&bits, &date, sizeof bits);
    r.slot.object->sim_time_at_reply_bits.store(bits, std::memory_order_release);
    return &r;
}

void memory_write_landed(RankRecord* waiting)
{
    if (!waiting) return;
    RankRecord& r = *waiting;
    if (!r.waits_on_memory) return;  // woken already
    memory_wait_over(r);
    // Its budget starts again now: the rank may take as long as it needs to see the
    // write, simulated time waits for it.
    r.memory_budget_base_ns = r.thread_cpu.now_ns();
    XBT_DEBUG("rank %d: a write landed in its memory at %.9f s", r.rank, simgrid::s4u::Engine::get_clock());
    // Last, once the bytes are there: releasing the semaphore is a simcall, which suspends
    // this actor until the gate next lets the simulation run, and the gate, woken, holds
    // simulated time for the rank, which computes again. Woken before the bytes, the rank
    // would spin on memory the write had not reached for its whole budget, be taken to
    // wait again, and see the write only then, while simulated time ran on towards the
    // next event (an E2E deadline, 10 s later): the date of its next call depended on how
    // fast it posted it.
    context().gate_wakeup->release();
    if (r.lockstep_idle) r.lockstep_wakeup->release();  // its LockstepIdle ends here
}

}  // namespace s4bxi::sim
