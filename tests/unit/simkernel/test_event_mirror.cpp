// The mirror of a rank's event queues and counters (s4bxi/mirror.hpp): what the rank may
// read without a round trip, and what the server learns of it.
#include <catch2/catch.hpp>

#include <memory>

#include "portals/counter.hpp"
#include "portals/event_queue.hpp"

using s4bxi::sim::Counter;
using s4bxi::sim::EventQueue;
using s4bxi::sim::TimedEvent;
namespace wire = s4bxi::wire;

namespace {

constexpr uint32_t kHandle = 0x20000003;

TimedEvent event_at(double visible_at, uint64_t tag)
{
    TimedEvent timed{};
    timed.visible_at = visible_at;
    timed.event.hdr_data = tag;
    timed.event.type = PTL_EVENT_PUT;
    return timed;
}

// The rank's view: takes the oldest readable event; returns its tag, or -1.
int64_t rank_takes(wire::EqMirror& q, uint64_t replies, double now, bool* dropped = nullptr)
{
    const wire::MirroredEvent* found = wire::readable_event(q, kHandle, replies, now);
    if (!found) return -1;
    ptl_event_t event;
    std::memcpy(&event, found->event, sizeof event);
    bool lost = wire::consume_event(q, replies);
    if (dropped) *dropped = lost;
    return static_cast<int64_t>(event.hdr_data);
}

struct Fixture {
    std::unique_ptr<wire::EqMirror> mirror = std::make_unique<wire::EqMirror>();
    std::atomic<uint64_t> replies{0};
    EventQueue queue;
    Fixture(uint64_t capacity = 0) { queue.open(0, capacity, kHandle, mirror.get(), &replies); }
};

}  // namespace

TEST_CASE("the rank reads the events written before its last reply, once visible", "[mirror]")
{
    Fixture f;
    f.queue.push(event_at(1.0, 10));
    f.queue.push(event_at(2.0, 11));
    f.replies = 1;  // the reply: both events were written before it
    CHECK(rank_takes(*f.mirror, 1, 0.5) == -1);  // not visible yet
    CHECK(rank_takes(*f.mirror, 1, 1.5) == 10);
    CHECK(rank_takes(*f.mirror, 1, 1.5) == -1);
    CHECK(rank_takes(*f.mirror, 1, 2.0) == 11);
    CHECK(rank_takes(*f.mirror, 1, 9.0) == -1);
    // Another handle (a freed and reallocated queue) reads nothing.
    CHECK(wire::readable_event(*f.mirror, kHandle + 1, 1, 9.0) == nullptr);
}

TEST_CASE("an event written after the rank's last reply waits for the next one", "[mirror]")
{
    Fixture f;
    f.replies = 1;
    f.queue.push(event_at(1.0, 10));  // the rank runs: stamped with the current count
    CHECK(rank_takes(*f.mirror, 1, 5.0) == -1);
    f.replies = 2;
    CHECK(rank_takes(*f.mirror, 2, 5.0) == 10);
}

TEST_CASE("the server learns what the rank took at its next request", "[mirror]")
{
    Fixture f;
    for (uint64_t i = 0; i < wire::kEqWindow + 36; ++i) f.queue.push(event_at(0.0, i));
    f.replies = 1;
    for (uint64_t i = 0; i < wire::kEqWindow; ++i) REQUIRE(rank_takes(*f.mirror, 1, 1.0) == static_cast<int64_t>(i));
    CHECK(rank_takes(*f.mirror, 1, 1.0) == -1);  // the window is empty, the rest is on the server
    CHECK(f.queue.size() == wire::kEqWindow + 36);
    f.queue.learn_consumed();  // the request
    CHECK(f.queue.size() == 36);
    // Refilled during the request, before its reply.
    f.replies = 2;
    CHECK(rank_takes(*f.mirror, 2, 1.0) == static_cast<int64_t>(wire::kEqWindow));
    // The server takes the next one itself (a round trip), the rank the one after.
    f.queue.learn_consumed();
    REQUIRE(f.queue.front() != nullptr);
    CHECK(f.queue.front()->event.hdr_data == wire::kEqWindow + 1);
    f.queue.pop_front();
    f.replies = 3;
    CHECK(rank_takes(*f.mirror, 3, 1.0) == static_cast<int64_t>(wire::kEqWindow + 2));
}

TEST_CASE("a full queue drops until the server knows the rank made room; the loss is reported once", "[mirror]")
{
    Fixture f(2);
    CHECK(f.queue.push(event_at(0.0, 1)));
    CHECK(f.queue.push(event_at(0.0, 2)));
    f.replies = 1;
    CHECK(rank_takes(*f.mirror, 1, 1.0) == 1);
    CHECK_FALSE(f.queue.push(event_at(0.0, 3)));  // the rank has not made a request since
    f.queue.learn_consumed();
    CHECK(f.queue.push(event_at(0.0, 4)));
    f.replies = 2;
    bool dropped = false;
    CHECK(rank_takes(*f.mirror, 2, 1.0, &dropped) == 2);
    CHECK(dropped);
    CHECK(rank_takes(*f.mirror, 2, 1.0, &dropped) == 4);
    CHECK_FALSE(dropped);
}

TEST_CASE("the server's own reads see the loss too", "[mirror]")
{
    Fixture f(1);
    f.queue.push(event_at(0.0, 1));
    f.queue.push(event_at(0.0, 2));
    CHECK(f.queue.take_dropped());
    CHECK_FALSE(f.queue.take_dropped());
}

TEST_CASE("a counter reads as of the rank's last reply", "[mirror]")
{
    auto mirror = std::make_unique<wire::CtMirror>();
    std::atomic<uint64_t> replies{4};
    Counter counter;
    counter.open(0, kHandle, mirror.get(), &replies);
    uint64_t success = 9, failure = 9;
    REQUIRE(wire::readable_counter(*mirror, kHandle, 5, success, failure));
    CHECK(success == 0);
    CHECK(failure == 0);
    counter.value.success = 3;
    counter.publish();  // before the reply
    replies = 5;
    counter.value.success = 7;
    counter.publish();  // after it, while the rank runs
    counter.value.success = 8;
    counter.publish();
    REQUIRE(wire::readable_counter(*mirror, kHandle, 5, success, failure));
    CHECK(success == 3);
    REQUIRE(wire::readable_counter(*mirror, kHandle, 6, success, failure));
    CHECK(success == 8);
    CHECK_FALSE(wire::readable_counter(*mirror, kHandle + 1, 6, success, failure));
    counter.set_last_read({8, 0});
    CHECK(counter.last_read().success == 8);
    counter.close();
    CHECK_FALSE(wire::readable_counter(*mirror, kHandle, 6, success, failure));
}
