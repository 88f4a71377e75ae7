// The rank's virtual clock, read without a round trip (docs/time.md): the simulated date
// of the last reply plus the compute since, by the CPU model; under the zero CPU model, a
// clock spin's readings turn into simulated sleeps (clock_spin.hpp).
#include "time/virtual_clock.hpp"

#include <atomic>

#include "channel/channel_client.hpp"
#include "rank/clock_ledger.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/time_math.hpp"
#include "time/clock_spin.hpp"

namespace s4bxi::interpose {
namespace {

// Wall time that passed without CPU time since the last reply means the rank was blocked
// outside the simulation (a pipe, a futex, a PMIx fence): see virtual_now().
constexpr int64_t kBlockedOutsideNs = 10'000'000;

ClockSpin g_clock_spin{};  // zero CPU model: readings that wait for the clock to move

// A reading under the zero CPU model: the date of the last reply, unless the readings
// have become a clock spin (clock_spin.hpp), which sleeps first.
double zero_model_reading(int64_t wall_ns)
{
    double now = sim_time_at_reply();
    if (double sleep = g_clock_spin.reading(now, t_posted); sleep > 0) {
        simulated_sleep(sleep);
        g_clock_spin.slept(t_posted);
        now = sim_time_at_reply();
        wall_ns = host_monotonic_ns();
    }
    set_threads_clock_offset(timemath::threads_clock_offset(timemath::seconds_to_ns(now), wall_ns));
    return now;
}

}  // namespace

double virtual_now()
{
    // Threads in lockstep hold simulated time while they run: the rank's last reply.
    if (on_lockstep_thread()) return sim_time_at_reply();
    if (may_catch_up() && !g_rank.in_reading) catch_up();
    // The wall stamp first: what runs after it is ours (cpu_accounting.hpp).
    int64_t wall_ns = host_monotonic_ns();
    // Within a request of this thread's (a signal handler), from a nested reading, or off
    // the simulated thread: the clock as it stands, no accounting. Another thread's request
    // leaves the simulated thread's clock to it: a progress thread that polls all the time
    // must not keep a busy-wait's readings from counting (clock_spin.hpp).
    if (!g_rank.active || t_in_call || t_in_post || g_rank.in_reading || !on_simulated_thread())
        return clock_at(sim_time_at_reply(), thread_cpu_ns(),
                        g_rank.slot->cpu_at_reply_ns.load(std::memory_order_acquire));
    const bool zero_model = zero_cpu_model();
    // Wall time that passed without CPU time means the rank was blocked outside the
    // simulation (a pipe, a futex, a PMIx fence): it did not hold simulated time, so its
    // clock must catch up with the simulation's before being read. CPU time counts from
    // the reply, before any exclusion, or from the end of a sleep the server answered.
    // The zero CPU model reads the CPU clock only when that may be the case, given the CPU
    // time known to have passed since the reply (at the previous reading).
    wire::Slot& slot = *g_rank.slot;
    int64_t wall_since_reply = wall_ns - g_rank.wall_at_reply_ns;
    uint64_t slot_base = slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    if (zero_model &&
        wall_since_reply - static_cast<int64_t>(g_rank.ledger.known_cpu_since_reply(slot_base)) <= kBlockedOutsideNs)
        return zero_model_reading(wall_ns);
    g_rank.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    uint64_t reply_cpu = g_rank.ledger.reply_reference(slot_base);
    int64_t cpu_since_reply = cpu_ns > reply_cpu ? static_cast<int64_t>(cpu_ns - reply_cpu) : 0;
    if (wall_since_reply - cpu_since_reply > kBlockedOutsideNs) {
        std::atomic_signal_fence(std::memory_order_seq_cst);
        g_rank.in_reading = false;
        uint32_t posted = t_posted;
        simulated_yield();  // a reading of its own (call())
        // Not the program's call: it neither spends a free poll (mirror_reads.cpp) nor
        // ends a clock spin. Under the zero model a rank the machine merely descheduled
        // comes back to the date it left, and the run goes on as if it had not been away.
        --t_requests;
        t_posted = posted;
        if (!zero_model) return sim_time_at_reply();
        return zero_model_reading(host_monotonic_ns());
    }
    uint64_t base = account_reading(cpu_ns, wall_ns);
    double now = clock_at(sim_time_at_reply(), cpu_ns, base);
    // The rank's other threads continue from this reading (docs/time.md).
    set_threads_clock_offset(timemath::threads_clock_offset(timemath::seconds_to_ns(now), wall_ns));
    g_rank.ledger.returned(host_monotonic_ns());
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_rank.in_reading = false;
    // Every reading under the zero model counts towards a clock spin, however long the
    // machine took to deliver it: the count decides when a busy-wait's sleeps happen.
    return zero_model ? zero_model_reading(host_monotonic_ns()) : now;
}

double clock_peek()
{
    if (!g_rank.active) return 0.0;
    if (may_catch_up() && !g_rank.in_reading) catch_up();
    if (zero_cpu_model()) return sim_time_at_reply();
    return clock_at(sim_time_at_reply(), thread_cpu_ns(), g_rank.slot->cpu_at_reply_ns.load(std::memory_order_acquire));
}

bool enter_library(uint64_t charge_ns, int64_t wall_entry_ns, double* clock_at_entry)
{
    if (!g_rank.active || zero_cpu_model() || t_in_call || t_in_post || g_rank.in_reading ||
        g_rank.ledger.frozen_ns != 0 || !on_simulated_thread() || on_lockstep_thread())
        return false;
    g_rank.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    *clock_at_entry = clock_at(sim_time_at_reply(), cpu_ns, account_reading(cpu_ns, wall_entry_ns));
    cpuacct::publish_freeze(*g_rank.slot, g_rank.ledger, cpu_ns, charge_ns);
    g_rank.library_charged_ns += charge_ns;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_rank.in_reading = false;
    return true;
}

double leave_library()
{
    if (!g_rank.active || g_rank.ledger.frozen_ns == 0) return clock_peek();
    g_rank.in_reading = true;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    uint64_t cpu_ns = thread_cpu_ns();
    double now = clock_at(sim_time_at_reply(), cpu_ns, account_reading(cpu_ns, 0));  // synced with the slot
    cpuacct::publish_thaw(*g_rank.slot, g_rank.ledger, cpu_ns);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_rank.in_reading = false;
    g_rank.ledger.returned(host_monotonic_ns());
    return now;
}

}  // namespace s4bxi::interpose
