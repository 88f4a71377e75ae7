// The deferral of PMIx callbacks (libinterpose/outside/outside_episode.hpp), against the stub
// runtime: what the simulated thread's calls get during an episode, and on which thread
// the program's callback runs.
#include <catch2/catch.hpp>

#include <sys/syscall.h>
#include <unistd.h>

#include <portals4.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "outside/outside_episode.hpp"
#include "stub_runtime.hpp"

namespace outside = s4bxi::interpose::outside;
namespace wire = s4bxi::wire;

namespace {

pid_t this_thread()
{
    return static_cast<pid_t>(syscall(SYS_gettid));
}

// The program's callback: records the thread it ran on.
struct Callback {
    std::mutex mutex;
    std::condition_variable done;
    pid_t ran_on = 0;

    static void invoke(void* self)
    {
        auto* c = static_cast<Callback*>(self);
        std::lock_guard lock(c->mutex);
        c->ran_on = this_thread();
        c->done.notify_all();
    }
};

// PMIx's thread: completes the operation after `delay`.
std::thread complete_later(outside::Operation* operation, Callback& callback, std::chrono::milliseconds delay)
{
    return std::thread([=, &callback] {
        std::this_thread::sleep_for(delay);
        outside::operation_completed(operation, Callback::invoke, &callback);
    });
}

const wire::Reply* absorb(wire::Op op)
{
    wire::EQPollArgs args{};
    return outside::absorb(op, &args);
}

}  // namespace

TEST_CASE("during an asynchronous episode empty polls cost nothing; a sleep waits for the callback and runs it",
          "[outside]")
{
    stub::reset();
    outside::begin_asynchronous(wire::OutsideWaitKind::Collective, nullptr, 0, "PMIx_Fence_nb");
    REQUIRE(stub::outside_waits == std::vector<uint32_t>{static_cast<uint32_t>(wire::OutsideWaitKind::Collective)});
    Callback callback;
    std::thread pmix = complete_later(outside::operation_started(), callback, std::chrono::milliseconds(20));
    const wire::Reply* local = absorb(wire::Op::PtlEQGet);
    REQUIRE(local);
    CHECK(local->rc == PTL_EQ_EMPTY);
    CHECK(callback.ran_on == 0);
    CHECK_FALSE(absorb(wire::Op::Sleep));  // waits, runs the callback, then goes to the server
    CHECK(callback.ran_on == this_thread());
    CHECK_FALSE(absorb(wire::Op::PtlEQGet));  // the episode is over
    pmix.join();
}

TEST_CASE("a thread that waits for the callback in a way of its own gets it from PMIx's thread", "[outside]")
{
    stub::reset();
    outside::begin_asynchronous(wire::OutsideWaitKind::Local, nullptr, 0, "PMIx_Register_event_handler");
    Callback callback;
    std::thread pmix = complete_later(outside::operation_started(), callback, std::chrono::milliseconds(10));
    {
        std::unique_lock lock(callback.mutex);  // a condition variable: no call of ours
        REQUIRE(callback.done.wait_for(lock, std::chrono::seconds(10), [&] { return callback.ran_on != 0; }));
    }
    CHECK(callback.ran_on != this_thread());
    pmix.join();
    pid_t ran_on = callback.ran_on;
    CHECK(absorb(wire::Op::PtlEQGet));        // still answered on the spot until a waiting call,
    CHECK_FALSE(absorb(wire::Op::Yield));     // which finds the callback done
    CHECK(callback.ran_on == ran_on);         // and does not run it again
    CHECK_FALSE(absorb(wire::Op::PtlEQGet));  // the episode is over
}

TEST_CASE("a loop of empty polls without sleep waits for the callback at its thousandth poll", "[outside]")
{
    stub::reset();
    outside::begin_asynchronous(wire::OutsideWaitKind::Collective, nullptr, 0, "PMIx_Fence_nb");
    Callback callback;
    std::thread pmix = complete_later(outside::operation_started(), callback, std::chrono::milliseconds(20));
    uint32_t polls = 0;
    while (absorb(wire::Op::PtlEQGet)) ++polls;
    CHECK(polls == outside::kPollsBeforePickup - 1);
    CHECK(callback.ran_on == this_thread());
    pmix.join();
}

TEST_CASE("a callback made within the call itself runs at once", "[outside]")
{
    stub::reset();
    outside::begin_asynchronous(wire::OutsideWaitKind::Local, nullptr, 0, "PMIx_Register_event_handler");
    Callback callback;
    outside::operation_completed(outside::operation_started(), Callback::invoke, &callback);
    CHECK(callback.ran_on == this_thread());
    CHECK_FALSE(absorb(wire::Op::Sleep));
}

TEST_CASE("a failed asynchronous call leaves nothing to wait for", "[outside]")
{
    stub::reset();
    outside::begin_asynchronous(wire::OutsideWaitKind::Collective, nullptr, 0, "PMIx_Fence_nb");
    outside::operation_failed(outside::operation_started());
    CHECK_FALSE(absorb(wire::Op::PtlEQGet));
}

TEST_CASE("inside a blocking call sleeps, yields and empty polls cost nothing and end nothing", "[outside]")
{
    stub::reset();
    outside::begin_blocking(wire::OutsideWaitKind::Local, nullptr, 0, "PMIx_Finalize");
    CHECK(outside::in_blocking_call());
    CHECK(absorb(wire::Op::Sleep));
    CHECK(absorb(wire::Op::Sleep));
    CHECK(absorb(wire::Op::Yield));
    CHECK(absorb(wire::Op::PtlEQGet));
    CHECK_FALSE(absorb(wire::Op::PtlPut));
    outside::end_blocking();
    CHECK_FALSE(outside::in_blocking_call());
    CHECK_FALSE(absorb(wire::Op::Sleep));
}
