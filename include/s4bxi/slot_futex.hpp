// Futex waits and wake-ups on the words the rank and the server share (a slot's state, the
// doorbell), for both sides.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi {

inline long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout)
{
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

// Sleeps on the slot's state while it reads `seen`, or until `timeout`. Sleepers are
// counted, so that whoever changes the state makes the wake-up system call only when
// someone sleeps: most replies come while the rank still spins (brief_wait.hpp).
inline void sleep_on_slot_state(wire::Slot& slot, uint32_t seen, const timespec* timeout)
{
    slot.sleepers.fetch_add(1, std::memory_order_seq_cst);
    futex(&slot.state, FUTEX_WAIT, seen, timeout);
    slot.sleepers.fetch_sub(1, std::memory_order_release);
}

// Sets the slot's state, then wakes its sleepers if there are any. The store and the load
// are sequentially consistent, as is the sleeper's count: either the count is seen here,
// or the sleeper's FUTEX_WAIT finds the new state and returns at once.
inline void set_slot_state_and_wake(wire::Slot& slot, wire::SlotState state)
{
    slot.state.store(static_cast<uint32_t>(state), std::memory_order_seq_cst);
    if (slot.sleepers.load(std::memory_order_seq_cst) != 0) futex(&slot.state, FUTEX_WAKE, INT_MAX, nullptr);
}

// Tells the gate that a slot changed (a request posted): counts, and wakes the gate only
// if it sleeps on the doorbell (wait_doorbell, channel_server.cpp).
inline void ring_doorbell(wire::Doorbell& doorbell)
{
    doorbell.count.fetch_add(1, std::memory_order_acq_rel);
    if (doorbell.server_waiting.load(std::memory_order_acquire)) futex(&doorbell.count, FUTEX_WAKE, 1, nullptr);
}

}  // namespace s4bxi
