// Server side of the shared-memory channel: creates each rank's slot and the doorbell,
// and waits on the doorbell (spin, then futex) without ever blocking on one rank.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::sim {

// A shared mapping backed by a memfd, so its fd can be passed to a rank.
template <class T>
struct SharedObject {
    T* object = nullptr;
    int fd = -1;
};

SharedObject<wire::Slot> create_slot();
SharedObject<wire::Doorbell> create_doorbell();

// Waits until the doorbell has rung since `seen` (returns the new count), or until
// `timeout_s` of wall time has passed (returns `seen`). Spins briefly before sleeping.
uint32_t wait_doorbell(wire::Doorbell& doorbell, uint32_t seen, double timeout_s);

// Publishes the reply in the slot and wakes the rank.
void publish_reply(wire::Slot& slot);

double wall_now();

}  // namespace s4bxi::sim
