// One copy per payload: the server orders the delivery thread of the rank whose memory a
// payload lands in to read it straight from the other rank's memory (wire::Delivery), so
// that the kernel copies the bytes once instead of twice through a buffer of the server.
// The order is given and awaited at the instant the server would copy: the bytes land at
// the same point of the simulation.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "host/process_access.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

// One side of a copy between two ranks, both of one machine.
struct DeliverySide {
    wire::Slot* slot;  // the rank's slot (null for a source that has none)
    const ProcessAccess* machine;  // how the server reaches the rank's process
    pid_t pid;
    uint64_t address;  // where the bytes are, or go, in its memory
    // The rank's thread that waits in the slot made the request the simulation is serving
    // now: it may then copy the payload itself. A request it has only posted is not
    // enough: the rank is still computing for the gate (a rank that waited on its memory,
    // say), whose CPU time and page faults the copy would then count as its own (SOS's
    // bigput on 4 ranks ended at another date in 1 run of 6 beside a CPU hog).
    bool request_in_service;
};

// Copies `length` bytes from the source rank's memory to the target rank's, by the
// target's delivery thread (or a thread of the target waiting awake for its reply; from
// kSplitFrom on, with both ranks' waiting threads awake, each copies half). False when it
// cannot (no thread, the thread or a process gone, a copy that stopped short: the caller
// then copies through its own buffer, which gives today's outcome, failure included).
bool order_delivery(const DeliverySide& source, const DeliverySide& target, uint64_t length);

// platform.copy_once_from: payloads of this size or more are ordered to the delivery
// thread (0: none is). Ranks learn it at registration, to start their thread in time.
void set_copy_once_from(uint64_t bytes);
uint64_t copy_once_from();

// A rank exec'd a new image: its delivery thread is gone with the old one.
void forget_delivery_thread(wire::Slot& slot);

struct DeliveryStats {
    uint64_t orders = 0;     // payloads copied once by a rank's delivery thread
    uint64_t fallbacks = 0;  // orders that could not be carried out (copied through the server)
};
DeliveryStats delivery_stats();

}  // namespace s4bxi::sim
