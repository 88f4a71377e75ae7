// What the layers above the channel do at points of a request. The channel includes none
// of them: start-up (startup/registration.cpp) installs their functions here before the
// rank's first request, and an unset hook does nothing.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose {

struct ChannelHooks {
    // threads/: a request is the interposer's code, shielded from the lockstep watchdog's
    // signal; `shield_request` returns what `unshield_request` is given back.
    bool (*shield_request)() = nullptr;
    void (*unshield_request)(bool outer) = nullptr;
    // threads/: a lockstep thread's reply tells the turn what the server decided.
    void (*lockstep_reply)(const wire::Reply& reply, wire::Slot& slot) = nullptr;
    // threads/: a lockstep thread whose wait the server parked waits for its result here.
    void (*lockstep_wait_parked)(wire::ParkedWait& wait) = nullptr;
    // time/: a reply to another thread than the simulated one moves the threads' clock.
    void (*other_thread_replied)(wire::Op op, int32_t rc, double sim_time, bool parked) = nullptr;
    // outside/: a request the rank answers itself during a wait outside the simulation
    // (null: it goes to the server), and whether such a wait is under way.
    const wire::Reply* (*absorb_outside)(wire::Op op, const void* args) = nullptr;
    bool (*outside_episode_under_way)() = nullptr;
};

// The hooks, installed once at start-up.
void install_channel_hooks(const ChannelHooks& hooks);

}  // namespace s4bxi::interpose
