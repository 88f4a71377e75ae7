// The simulated NIC writes into the memory of a rank (a payload, an atomic's result), for
// the life of this object. Before the bytes, the rank's clock, if it waits on its memory,
// reads this date (a rank that sees the bytes must read their date); after them
// (landed()), the rank holds time again from this instant, and the gate is woken to see it.
// A rank whose threads are in lockstep counts the write (wire::Reply::memory_writes). Who
// waits on memory is scheduling/'s to know (memory_waits.hpp): the writers, below it,
// reach it through run/scheduling_hooks.hpp.
#pragma once

#include "run/scheduling_hooks.hpp"

namespace s4bxi::sim {

class MemoryWrite {
public:
    explicit MemoryWrite(RankRecord& rank) : waiting_(g_scheduling_hooks.memory_write_begins(rank)) {}
    MemoryWrite(const MemoryWrite&) = delete;
    MemoryWrite& operator=(const MemoryWrite&) = delete;
    void landed()
    {
        RankRecord* waiting = waiting_;
        waiting_ = nullptr;
        g_scheduling_hooks.memory_write_landed(waiting);
    }

private:
    RankRecord* waiting_ = nullptr;
};

}  // namespace s4bxi::sim
