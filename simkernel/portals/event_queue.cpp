#include "portals/event_queue.hpp"

#include <cstring>
#include <utility>

namespace s4bxi::sim {

void EventQueue::open(uint32_t ni_index, uint64_t count, uint32_t handle, wire::EqMirror* mirror,
                      const std::atomic<uint64_t>* replies)
{
    close();
    used = true;
    ni = ni_index;
    capacity = count;
    mirror_ = mirror;
    replies_ = replies;
    if (!mirror_) return;
    mirror_->dropped.store(0, std::memory_order_relaxed);
    mirror_->head.store(0, std::memory_order_relaxed);
    mirror_->tail.store(0, std::memory_order_relaxed);
    mirror_->handle.store(handle, std::memory_order_release);
}

void EventQueue::close()
{
    if (mirror_) mirror_->handle.store(0, std::memory_order_release);
    *this = EventQueue{};
}

bool EventQueue::push(const TimedEvent& event)
{
    if (full()) {
        if (!mirror_) dropped_ = true;
        else if (mirror_->dropped.load(std::memory_order_relaxed) == 0)
            mirror_->dropped.store(stamp() + 1, std::memory_order_release);
        return false;
    }
    events_.push_back(event);
    refill();
    return true;
}

void EventQueue::pop_front()
{
    if (events_.empty()) return;
    events_.pop_front();
    if (mirror_) {
        // The front is in the window (refill() keeps it full): the server consumes it
        // while the rank waits in its request.
        ++known_tail_;
        mirror_->tail.store(known_tail_, std::memory_order_release);
        refill();
    }
}

bool EventQueue::take_dropped()
{
    if (!mirror_) return std::exchange(dropped_, false);
    return mirror_->dropped.exchange(0, std::memory_order_acq_rel) != 0;
}

void EventQueue::learn_consumed()
{
    if (!mirror_) return;
    uint64_t tail = mirror_->tail.load(std::memory_order_acquire);
    if (tail <= known_tail_ || tail > head_) return;  // nothing new, or nonsense from the rank
    events_.erase(events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(tail - known_tail_));
    known_tail_ = tail;
    refill();
}

void EventQueue::refill()
{
    if (!mirror_) return;
    while (head_ - known_tail_ < wire::kEqWindow && head_ - known_tail_ < events_.size()) {
        const TimedEvent& event = events_[head_ - known_tail_];
        wire::MirroredEvent& place = mirror_->window[head_ % wire::kEqWindow];
        place.visible_at = event.visible_at;
        place.stamp = stamp();
        static_assert(sizeof event.event == sizeof place.event);
        std::memcpy(place.event, &event.event, sizeof place.event);
        ++head_;
        mirror_->head.store(head_, std::memory_order_release);
    }
}

}  // namespace s4bxi::sim
