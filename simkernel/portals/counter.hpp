// A rank's counting event (CT) as the server holds it. Its value is also mirrored in the
// rank's memory (wire::CtMirror), where PtlCTGet, PtlCTWait and PtlCTPoll read it without
// a round trip when they can (docs/design.md "Polling").
#pragma once

#include <portals4.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "s4bxi/mirror.hpp"

namespace s4bxi::sim {

// An operation waiting for a counter to reach its threshold (triggered operations).
struct Trigger {
    uint64_t threshold;
    uint64_t order;  // registration order, for equal thresholds
    std::function<void()> fire;
};

struct Counter {
    bool used = false;
    uint32_t ni = 0;
    ptl_ct_event_t value{0, 0};
    std::vector<Trigger> triggers;

    // `mirror` may be null (an index past wire::kMirroredCts); `replies` counts the
    // replies given to the rank (wire::Mirror).
    void open(uint32_t ni_index, uint32_t handle, wire::CtMirror* mirror, const std::atomic<uint64_t>* replies)
    {
        close();
        used = true;
        ni = ni_index;
        mirror_ = mirror;
        replies_ = replies;
        if (mirror_) wire::open_counter(*mirror_, handle, stamp());
    }

    void close()
    {
        if (mirror_) mirror_->handle.store(0, std::memory_order_release);
        *this = Counter{};
    }

    // After every change of `value`.
    void publish()
    {
        if (mirror_) wire::write_counter(*mirror_, value.success, value.failure, stamp());
    }

    // What the rank's last PtlCTGet returned, locally or not: reading it again is an empty poll.
    ptl_ct_event_t last_read() const
    {
        if (!mirror_) return last_read_;
        return {mirror_->last_read_success.load(std::memory_order_relaxed),
                mirror_->last_read_failure.load(std::memory_order_relaxed)};
    }

    void set_last_read(ptl_ct_event_t read)
    {
        last_read_ = read;
        if (!mirror_) return;
        mirror_->last_read_success.store(read.success, std::memory_order_relaxed);
        mirror_->last_read_failure.store(read.failure, std::memory_order_relaxed);
    }

private:
    uint64_t stamp() const { return replies_ ? replies_->load(std::memory_order_relaxed) : 0; }

    ptl_ct_event_t last_read_{0, 0};
    wire::CtMirror* mirror_ = nullptr;
    const std::atomic<uint64_t>* replies_ = nullptr;
};

}  // namespace s4bxi::sim
