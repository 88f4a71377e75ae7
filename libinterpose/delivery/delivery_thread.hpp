// The rank's delivery thread: it carries out the server's copy orders (wire::Delivery),
// reading a payload straight from another rank's memory into this one's, so that the
// kernel copies it once (docs/model.md "How payloads move").
#pragma once

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose {

// Starts the thread the first time the rank offers memory a payload of `copy_once_from`
// bytes (the Welcome's) may land in: a memory descriptor or a list entry that large. A
// program that never does has no extra thread. Idempotent; any thread may call it.
void start_delivery_thread_for(wire::Slot& slot, uint64_t length, uint64_t copy_once_from);

// Carries out the server's order if one is posted and nobody has taken it: the delivery
// thread's job, which a thread of the rank waiting for a reply does too. That thread is
// awake and watching the slot, where the delivery thread may be asleep: the copy starts
// without a futex wake-up. Returns true if it copied.
bool take_delivery_order(wire::Delivery& d);

// For a thread waiting for the reply to its request: true once the reply is in the slot;
// until then, carries out a copy order for this rank if one comes (take_delivery_order).
bool replied_or_delivering(wire::Slot& slot);

// The same for a request about to be made: a PtlMDBind or PtlMEAppend of contiguous memory.
void start_delivery_thread_if_due(wire::Slot& slot, wire::Op op, const void* args, uint64_t copy_once_from);

}  // namespace s4bxi::interpose
