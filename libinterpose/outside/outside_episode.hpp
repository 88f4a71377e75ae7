// A wait outside the simulation that the rank announces to the server (the PMIx calls of
// pmix_waits.cpp; simkernel/services/outside_waits.hpp says how the server resolves it).
//
// Open MPI waits for an asynchronous PMIx operation (a fence, an event handler's
// registration) in a loop such as `while (flag) { opal_progress(); usleep(100); }`, the
// flag being cleared by a callback on PMIx's own thread. How many rounds that loop makes
// depends on real time; if each round cost a simulated sleep and empty polls, so would the
// run's simulated dates. So the callback is deferred: the program's callback runs on the
// simulated thread, at the first call of ours that waits (a sleep, a yield, the
// kPollsBeforePickup-th empty poll, any request to the server), which first waits in real
// time for the operation to complete. Until then, its empty event-queue polls are
// answered locally at no simulated cost. The loop therefore makes the same rounds in
// every run, whatever PMIx takes.
//
// A program that waits for the callback without calling us at all (a condition variable,
// a pure spin) would never reach that point: when the simulated thread makes none of our
// calls for kFallbackMilliseconds after the operation completed, the callback runs on
// PMIx's thread as it normally would (the wait then involves no simulated call, so the run
// stays the same).
//
// A blocking PMIx call is an episode that ends when the call returns.
#pragma once

#include <cstdint>

#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::outside {

inline constexpr uint32_t kPollsBeforePickup = 1000;
inline constexpr int kFallbackMilliseconds = 50;

// Announces the wait (one request, at no simulated cost) and starts an episode, after
// finishing an asynchronous one still under way. `ranks` lists the participants of a
// collective (count 0: every rank of the run). Simulated thread only.
void begin_asynchronous(wire::OutsideWaitKind kind, const int32_t* ranks, uint32_t count, const char* what);

// The same for a blocking call; end_blocking() when it returns. Blocking calls nest (a
// fence inside PMIx_Finalize); until the outermost returns, sleeps, yields and empty polls
// (a retry loop inside PMIx) cost nothing. The server-side state lasts until the next request.
void begin_blocking(wire::OutsideWaitKind kind, const int32_t* ranks, uint32_t count, const char* what);
void end_blocking();

// True inside a blocking call announced by begin_blocking(): PMIx calls that it makes
// itself belong to it.
bool in_blocking_call();

// The asynchronous operation of the current episode. started() on the simulated thread,
// before the PMIx call; then exactly one of failed() (the call returned an error: no
// callback will come) or completed() (from the PMIx callback, on any thread), which hands
// over the program's callback as `invoke(context)` and returns once it has run.
struct Operation;
Operation* operation_started();
void operation_failed(Operation* operation);
void operation_completed(Operation* operation, void (*invoke)(void*), void* context);

// True while an episode is under way: every call must then go through absorb(), so none
// is posted without waiting (channel/channel_client.hpp, post()).
bool episode_under_way();

// For call(), on the simulated thread, before posting `op`: the reply that answers it
// locally, or nullptr when it must go to the server.
const wire::Reply* absorb(wire::Op op, const void* args);

}  // namespace s4bxi::interpose::outside
