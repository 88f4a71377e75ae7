#include "rank/clock_ledger.hpp"

#include <cstring>

#include "rank/rank_state.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/time_math.hpp"

namespace s4bxi::interpose {
namespace {

void publish_threads_clock_offset(int64_t offset_ns)
{
    g_rank.slot->threads_clock_offset_ns.store(offset_ns, std::memory_order_release);
    g_rank.ledger.published(offset_ns);
}

}  // namespace

double sim_time_at_reply()
{
    return g_rank.slot->sim_time_at_reply();
}

double clock_at(double sim_time, uint64_t cpu_ns, uint64_t base_ns)
{
    return timemath::virtual_clock(sim_time, base_ns, cpu_ns, g_rank.slot->cpu_frozen_ns.load(std::memory_order_acquire),
                                   g_rank.welcome.cpu_factor, zero_cpu_model());
}

uint64_t account_reading(uint64_t cpu_ns, int64_t wall_entry_ns)
{
    wire::Slot& slot = *g_rank.slot;
    uint64_t slot_base = slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    uint64_t base = g_rank.ledger.reading(cpu_ns, wall_entry_ns, slot_base,
                                          slot.threads_clock_offset_ns.load(std::memory_order_relaxed),
                                          slot.cpu_frozen_ns.load(std::memory_order_acquire));
    if (base != slot_base) slot.cpu_at_reply_ns.store(base, std::memory_order_release);
    return base;
}

void clock_after_reply(double sim_time, bool accounted)
{
    wire::Slot& slot = *g_rank.slot;
    uint64_t bits;
    memcpy(&bits, &sim_time, sizeof bits);
    int64_t sim_ns = timemath::seconds_to_ns(sim_time);
    // The reply's reading of the CPU clock, then the wall stamp: as little as possible of
    // our own work after them is charged to the application.
    uint64_t reply_cpu_ns = thread_cpu_ns();
    int64_t wall_ns = host_monotonic_ns();
    g_rank.wall_at_reply_ns = wall_ns;
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_relaxed);
    slot.cpu_at_reply_ns.store(reply_cpu_ns, std::memory_order_relaxed);
    g_rank.ledger.replied(reply_cpu_ns);
    if (g_rank.ledger.frozen_ns) slot.cpu_frozen_ns.store(reply_cpu_ns, std::memory_order_relaxed);
    g_rank.replies_known.store(wire::mirror_of(slot).replies.load(std::memory_order_acquire), std::memory_order_relaxed);
    publish_threads_clock_offset(timemath::threads_clock_offset(sim_ns, wall_ns));
    g_rank.ledger.returned(accounted ? wall_ns : 0);
}

int64_t threads_clock_offset()
{
    return g_rank.slot ? g_rank.slot->threads_clock_offset_ns.load(std::memory_order_acquire) : 0;
}

void set_threads_clock_offset(int64_t offset_ns)
{
    if (g_rank.slot) publish_threads_clock_offset(offset_ns);
}

}  // namespace s4bxi::interpose
