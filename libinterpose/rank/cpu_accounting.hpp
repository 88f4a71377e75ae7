// What part of the simulated thread's CPU time is the application's own work (charged as
// simulated compute under the measured CPU model) and what part is the interposer's (not
// charged). Pure logic, header-only, so that the unit tests can check it directly; the
// ledger (clock_ledger.cpp) and the clock (time/virtual_clock.cpp) feed it the readings.
//
// The rank reads its thread CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call) at each
// "reading": when a request to the server is posted and when its reply has come (call()),
// and when the simulated thread reads its virtual clock (virtual_now()). Between two
// readings, the CPU clock also counts work that is not the application's: the end of the
// first reading's system call, our code after it, our code before the second reading and
// the start of its system call. On a virtual machine, right after the thread waited for
// the server, that is 0.4 to 1 µs per reading.
//
// So the interposer stamps the host's CLOCK_MONOTONIC (vDSO, no system call) as it hands
// control back to the application (after its reading) and again as the application calls
// in (before the next reading). Between the two stamps the thread ran the application's
// code, or was descheduled: the application's CPU time in the segment is at most that
// wall time, and the rest of the segment's CPU time is the interposer's:
//
//     overhead = (cpu_now - cpu_prev) - (wall_entry - wall_exit), when positive.
//
// When the thread was descheduled between the stamps, the wall time exceeds the CPU time
// and nothing is excluded: the segment is charged whole, as before. The overhead is taken
// off the simulated compute by moving the base of the virtual clock (the slot's
// cpu_at_reply_ns: clock = sim_time_at_reply + (cpu - base) × cpu_factor) forward by as
// much at the reading. It never exceeds the segment's CPU time, so the clock never goes
// backward; it is bounded by kMaxOverheadNs, so that a slight difference of rate between
// the two host clocks over a long computation cannot remove real work.
#pragma once

#include <atomic>
#include <cstdint>

#include "s4bxi/time_math.hpp"

namespace s4bxi::interpose::cpuacct {

// More than a reading costs (a few µs at worst, with cold caches after a context switch);
// far less than the compute it could wrongly remove from a long segment (0.01 % of 100 ms).
inline constexpr uint64_t kMaxOverheadNs = 10'000;

// CPU time (ns) of the segment [cpu_prev_ns, cpu_now_ns] between two readings that was not
// the application's, which ran from wall_exit_ns (the interposer returned to it) to
// wall_entry_ns (it called the interposer again), both on the host's CLOCK_MONOTONIC.
// 0 when the exit stamp is missing (wall_exit_ns <= 0) or the values are inconsistent.
constexpr uint64_t overhead_ns(uint64_t cpu_prev_ns, uint64_t cpu_now_ns, int64_t wall_exit_ns,
                               int64_t wall_entry_ns)
{
    if (wall_exit_ns <= 0 || wall_entry_ns < wall_exit_ns || cpu_now_ns <= cpu_prev_ns) return 0;
    uint64_t cpu = cpu_now_ns - cpu_prev_ns;
    uint64_t application = static_cast<uint64_t>(wall_entry_ns - wall_exit_ns);
    if (application >= cpu) return 0;
    uint64_t overhead = cpu - application;
    return overhead < kMaxOverheadNs ? overhead : kMaxOverheadNs;
}

// The simulated thread's record of its readings. The server writes the slot too: when it
// answers a trapped clock read of that thread (it publishes a new threads_clock_offset_ns,
// having shown the CPU time so far), or a trapped sleep (it writes the slot as a reply:
// new cpu_at_reply_ns and offset). The segment around such an answer is charged whole.
struct Ledger {
    uint64_t reading_cpu_ns = 0;   // CPU clock at the last reading
    int64_t returned_wall_ns = 0;  // host CLOCK_MONOTONIC when control last went back to
                                   // the application; 0: unknown (the next segment is charged whole)
    uint64_t reply_cpu_ns = 0;     // CPU clock at the last reply, before any exclusion
    uint64_t base_ns = 0;          // the slot's cpu_at_reply_ns as the rank last wrote it
    int64_t offset_ns = 0;         // the slot's threads_clock_offset_ns as the rank last wrote it
    uint64_t frozen_ns = 0;        // the slot's cpu_frozen_ns: the CPU clock at which the
                                   // virtual clock stands still while the MPI library's code
                                   // runs (timemath::charged_cpu_ns); 0: it runs

    // A reading `cpu_ns`, taken after the application called in at `wall_entry_ns`, with the
    // slot's current base and offset. Returns the base of the clock from now on; the caller
    // stores it into the slot when it differs from `slot_base_ns`.
    // While the clock stands still (frozen_ns), nothing is left out: nothing counts anyway.
    constexpr uint64_t reading(uint64_t cpu_ns, int64_t wall_entry_ns, uint64_t slot_base_ns, int64_t slot_offset_ns,
                               uint64_t slot_frozen_ns = 0)
    {
        if (slot_base_ns != base_ns) {
            base_ns = reply_cpu_ns = slot_base_ns;  // a sleep the server answered: a reply
            frozen_ns = slot_frozen_ns;             // which moved the frozen clock with it
        } else if (slot_offset_ns == offset_ns && frozen_ns == 0)
            base_ns += overhead_ns(reading_cpu_ns, cpu_ns, returned_wall_ns, wall_entry_ns);
        reading_cpu_ns = cpu_ns;
        return base_ns;
    }

    // The reply to a request, read at `cpu_ns`: the new base.
    // Within the MPI library's code the clock stays frozen, from the reply on.
    constexpr void replied(uint64_t cpu_ns)
    {
        reading_cpu_ns = reply_cpu_ns = base_ns = cpu_ns;
        if (frozen_ns != 0) frozen_ns = cpu_ns;
    }

    // The simulated thread enters the MPI library at `cpu_ns` (after its reading): from now
    // on its CPU time does not count, and the model's `charge_ns` for the call does, at
    // once (the base moves back by as much). Returns the new base.
    constexpr uint64_t freeze(uint64_t cpu_ns, uint64_t charge_ns)
    {
        frozen_ns = cpu_ns;
        base_ns -= charge_ns < base_ns ? charge_ns : base_ns;
        reading_cpu_ns = cpu_ns;
        return base_ns;
    }

    // It leaves the library at `cpu_ns`: the CPU time since the clock froze is left out, up
    // to timemath::kLibraryFreezeNs (the base moves forward by as much), and the clock runs
    // again. Returns the new base.
    constexpr uint64_t thaw(uint64_t cpu_ns)
    {
        base_ns += timemath::library_excluded_ns(cpu_ns, frozen_ns);
        frozen_ns = 0;
        reading_cpu_ns = cpu_ns;
        return base_ns;
    }

    // Control goes back to the application (`wall_ns`, or 0 when the next segment must be
    // charged whole).
    constexpr void returned(int64_t wall_ns) { returned_wall_ns = wall_ns; }

    // The rank wrote the slot's threads_clock_offset_ns.
    constexpr void published(int64_t offset) { offset_ns = offset; }

    // The CPU clock at the last reply (or at the end of a sleep the server answered since),
    // before any exclusion: where "CPU time since the reply" counts from.
    constexpr uint64_t reply_reference(uint64_t slot_base_ns) const
    {
        return slot_base_ns == base_ns ? reply_cpu_ns : slot_base_ns;
    }

    // CPU time since that reference known without reading the clock (at the last reading).
    constexpr uint64_t known_cpu_since_reply(uint64_t slot_base_ns) const
    {
        return slot_base_ns == base_ns && reading_cpu_ns > reply_cpu_ns ? reading_cpu_ns - reply_cpu_ns : 0;
    }
};

// The slot's clock fields as the rank publishes them in and out of the MPI library's code:
// in the order that shows a server reading in between an earlier clock, never a later one
// (the gate's horizon is a lower bound). `Slot` has cpu_frozen_ns and cpu_at_reply_ns.
template <class Slot>
void publish_freeze(Slot& slot, Ledger& ledger, uint64_t cpu_ns, uint64_t charge_ns)
{
    slot.cpu_frozen_ns.store(cpu_ns, std::memory_order_release);  // before the base moves back
    slot.cpu_at_reply_ns.store(ledger.freeze(cpu_ns, charge_ns), std::memory_order_release);
}

template <class Slot>
void publish_thaw(Slot& slot, Ledger& ledger, uint64_t cpu_ns)
{
    slot.cpu_at_reply_ns.store(ledger.thaw(cpu_ns), std::memory_order_release);  // before the clock runs
    slot.cpu_frozen_ns.store(0, std::memory_order_release);
}

}  // namespace s4bxi::interpose::cpuacct
