// A rank's event queue as the server holds it: every event not yet consumed. The oldest
// are also mirrored in the rank's memory (wire::EqMirror), where the rank takes them
// without a round trip (docs/design.md "Polling"). The server learns what the rank took only
// when the rank next makes a request (learn_consumed), so that what it decides in between
// (a full queue drops an event) never depends on how fast the rank ran in real time.
#pragma once

#include <portals4.h>

#include <atomic>
#include <cstdint>
#include <deque>

#include "s4bxi/mirror.hpp"

namespace s4bxi::sim {

// Events become visible to the rank at `visible_at`: the delivery of a zero-byte message
// from the issuing host to the rank's core costs exactly the route latency.
struct TimedEvent {
    double visible_at;
    ptl_event_t event;
};

class EventQueue {
public:
    bool used = false;
    uint32_t ni = 0;
    uint64_t capacity = 0;  // 0: unbounded

    // `mirror` may be null (an index past wire::kMirroredEqs): the queue is then the
    // server's alone. `replies` counts the replies given to the rank (wire::Mirror).
    void open(uint32_t ni_index, uint64_t count, uint32_t handle, wire::EqMirror* mirror,
              const std::atomic<uint64_t>* replies);
    void close();

    // Events not consumed, as far as the server knows.
    size_t size() const { return events_.size(); }
    bool full() const { return capacity && events_.size() >= capacity; }
    // Appends the event, or records a drop when the queue is full (returns false).
    bool push(const TimedEvent& event);
    const TimedEvent* front() const { return events_.empty() ? nullptr : &events_.front(); }
    // The first date after `now` at which one of its events becomes visible (-1: none).
    // Events are appended about in the order they become visible: only the newest are read.
    double first_visible_after(double now) const
    {
        double first = -1.0;
        for (auto e = events_.rbegin(); e != events_.rend() && e->visible_at > now; ++e) first = e->visible_at;
        return first;
    }
    void pop_front();
    // True once after an event was dropped: the next event taken reports PTL_EQ_DROPPED.
    bool take_dropped();
    // The rank is in a request: what it took from the mirror since is consumed.
    void learn_consumed();

private:
    void refill();
    uint64_t stamp() const { return replies_ ? replies_->load(std::memory_order_relaxed) : 0; }

    std::deque<TimedEvent> events_;
    bool dropped_ = false;  // unmirrored queues only
    wire::EqMirror* mirror_ = nullptr;
    const std::atomic<uint64_t>* replies_ = nullptr;
    // The window holds events_[0, head_ - known_tail_): the server is its only writer, and
    // known_tail_ is the mirror's tail as of the rank's last request.
    uint64_t head_ = 0;
    uint64_t known_tail_ = 0;
};

}  // namespace s4bxi::sim
