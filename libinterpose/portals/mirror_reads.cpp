#include "portals/mirror_reads.hpp"

#include <cstdint>
#include <cstring>
#include <utility>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "time/virtual_clock.hpp"
#include "s4bxi/poll_work.hpp"

namespace s4bxi::interpose::mirror_reads {
namespace {

namespace wire = s4bxi::wire;

// Set while a call reads the mirror: a signal handler's Portals call in the middle of it
// goes to the server instead of taking the same event twice.
volatile bool g_reading = false;

// A polling loop goes round once more after it found an event before it moves on: that
// empty poll costs the loop next to nothing, where a fast-forward step would charge it
// hundreds of nanoseconds on every message. Granted by an event, spent by the next empty
// poll, lost with any other call. Not by an event the rank's own call made without the
// network (LINK, SEARCH): a loop of PtlMESearch and polls would then never let time pass,
// unless the search itself waited out a polling step (search_took_step()).
// Per thread: only the simulated thread reads locally, but any thread's poll may grant.
thread_local bool t_free_poll = false;
thread_local uint64_t t_free_poll_requests = 0;  // requests_made() when it was granted
thread_local bool t_search_took_step = false;     // the last search's reply said so

bool take_free_poll()
{
    bool available = t_free_poll && t_free_poll_requests == requests_made();
    t_free_poll = false;
    return available;
}

void grant_free_poll(const ptl_event_t& event)
{
    bool own = event.type == PTL_EVENT_LINK || event.type == PTL_EVENT_SEARCH;
    bool stepped = event.type == PTL_EVENT_SEARCH && std::exchange(t_search_took_step, false);
    t_free_poll = !own || stepped;
    t_free_poll_requests = requests_made();
}

class Reading {
public:
    Reading() : mirror_(g_reading ? nullptr : readable_mirror())
    {
        if (!mirror_) return;
        g_reading = true;
        // Under the measured CPU model the rank may read what the server wrote while it
        // ran: runs are not reproducible anyway, and nothing written is later than the
        // rank's clock (the gate lets simulated time run only up to what computing ranks
        // have surely reached; events still check their visibility date).
        replies_ = zero_cpu_model() ? mirror_->replies.load(std::memory_order_acquire) : UINT64_MAX;
    }
    ~Reading()
    {
        if (!mirror_) return;
        g_reading = false;
        release_mirror();
    }
    Reading(const Reading&) = delete;
    Reading& operator=(const Reading&) = delete;

    explicit operator bool() const { return mirror_ != nullptr; }

    wire::EqMirror* queue(ptl_handle_eq_t handle) const
    {
        uint32_t index = handle & wire::kHandleIndexMask;
        if (handle == 0 || index >= wire::kMirroredEqs) return nullptr;
        wire::EqMirror& q = mirror_->eqs[index];
        return q.handle.load(std::memory_order_acquire) == handle ? &q : nullptr;
    }

    wire::CtMirror* counter(ptl_handle_ct_t handle) const
    {
        uint32_t index = handle & wire::kHandleIndexMask;
        if (handle == 0 || index >= wire::kMirroredCts) return nullptr;
        wire::CtMirror& c = mirror_->cts[index];
        return c.handle.load(std::memory_order_acquire) == handle ? &c : nullptr;
    }

    // Takes the queue's oldest event if the rank may see it now; sets `rc`.
    bool take(wire::EqMirror& q, uint32_t handle, ptl_event_t* event, int* rc) const
    {
        const wire::MirroredEvent* found = wire::readable_event(q, handle, replies_, clock());
        if (!found) return false;
        static_assert(sizeof *event == sizeof found->event);
        std::memcpy(event, found->event, sizeof *event);
        *rc = wire::consume_event(q, replies_) ? PTL_EQ_DROPPED : PTL_OK;
        looked_at_events();
        answered(is_work(*event));
        grant_free_poll(*event);
        return true;
    }

    // After an event queue read that found nothing: PTL_EQ_EMPTY at once right after a
    // poll that found an event.
    bool free_empty_poll(int* rc) const
    {
        if (!take_free_poll()) return false;
        looked_at_events();
        *rc = PTL_EQ_EMPTY;
        answered(false);
        return true;
    }

    // After an event queue read that found nothing: PTL_EQ_EMPTY at once if an event the
    // rank has not looked at is visible (the server's unseen_event_visible()). Whether it
    // is work is known when it is taken (take(), is_work()).
    bool empty_with_work_elsewhere(int* rc) const
    {
        uint64_t events = mirror_->events_at_reply.load(std::memory_order_relaxed);
        if (events == mirror_->events_looked.load(std::memory_order_relaxed) ||
            mirror_->last_event_visible_at_reply.load(std::memory_order_relaxed) > clock())
            return false;
        looked_at_events();
        *rc = PTL_EQ_EMPTY;
        answered(false);
        return true;
    }

    bool value(const wire::CtMirror& c, uint32_t handle, ptl_ct_event_t& out) const
    {
        return wire::readable_counter(c, handle, replies_, out.success, out.failure);
    }

    // `found_work`: a poll that found an event or a new counter value (not a satisfied wait).
    void answered(bool found_work) const
    {
        t_free_poll = false;  // another call: granted again by take() only
        bump(mirror_->local_reads);
        if (found_work) bump(mirror_->local_polls_with_work);
    }

private:
    void looked_at_events() const
    {
        mirror_->events_looked.store(mirror_->events_at_reply.load(std::memory_order_relaxed), std::memory_order_relaxed);
    }

    static void bump(std::atomic<uint64_t>& count)
    {
        count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    // Read only when an event may be taken. A rank found blocked outside catches up with a
    // request there, which leaves `replies_` behind: stricter, never wrong.
    double clock() const
    {
        if (!clock_read_) {
            now_ = virtual_now();
            clock_read_ = true;
        }
        return now_;
    }

    wire::Mirror* mirror_;
    mutable double now_ = 0.0;
    mutable bool clock_read_ = false;
    uint64_t replies_ = 0;
};

bool reached(const ptl_ct_event_t& value, ptl_size_t test)
{
    return value.success >= test || value.failure > 0;
}

}  // namespace

bool eq_get(ptl_handle_eq_t handle, bool polling, ptl_event_t* event, int* rc)
{
    Reading reading;
    if (!reading) return false;
    wire::EqMirror* q = reading.queue(handle);
    return q && (reading.take(*q, handle, event, rc) ||
                 (polling && (reading.free_empty_poll(rc) || reading.empty_with_work_elsewhere(rc))));
}

bool eq_poll(const ptl_handle_eq_t* handles, unsigned int size, bool polling, ptl_event_t* event, unsigned int* which,
             int* rc)
{
    Reading reading;
    if (!reading || size > wire::kMaxPollHandles) return false;
    wire::EqMirror* queues[wire::kMaxPollHandles];
    for (unsigned int i = 0; i < size; ++i)
        if (!(queues[i] = reading.queue(handles[i]))) return false;
    // The first queue, in the caller's order, with an event to take: as the server does.
    for (unsigned int i = 0; i < size; ++i) {
        ptl_event_t found;
        if (reading.take(*queues[i], handles[i], &found, rc)) {
            if (event) *event = found;
            if (which) *which = i;
            return true;
        }
    }
    return polling && (reading.free_empty_poll(rc) || reading.empty_with_work_elsewhere(rc));
}

void after_event(const ptl_event_t& event)
{
    grant_free_poll(event);
}

void search_took_step()
{
    t_search_took_step = true;
}

bool ct_get(ptl_handle_ct_t handle, ptl_ct_event_t* event)
{
    // Under the measured CPU model the server is behind a computing rank's clock: counts
    // dated between the two may still come, and the value here could be stale. A wait or
    // poll whose test is met is another matter: counts only grow.
    if (!zero_cpu_model()) return false;
    Reading reading;
    if (!reading) return false;
    wire::CtMirror* c = reading.counter(handle);
    ptl_ct_event_t value;
    if (!c || !reading.value(*c, handle, value)) return false;
    // The same value as the last PtlCTGet: an empty poll, which the server fast-forwards.
    if (value.success == c->last_read_success.load(std::memory_order_relaxed) &&
        value.failure == c->last_read_failure.load(std::memory_order_relaxed))
        return false;
    c->last_read_success.store(value.success, std::memory_order_relaxed);
    c->last_read_failure.store(value.failure, std::memory_order_relaxed);
    *event = value;
    reading.answered(true);
    return true;
}

bool ct_wait(ptl_handle_ct_t handle, ptl_size_t test, ptl_ct_event_t* event)
{
    Reading reading;
    if (!reading) return false;
    wire::CtMirror* c = reading.counter(handle);
    ptl_ct_event_t value;
    if (!c || !reading.value(*c, handle, value) || !reached(value, test)) return false;
    *event = value;
    reading.answered(false);
    return true;
}

bool ct_poll(const ptl_handle_ct_t* handles, const ptl_size_t* tests, unsigned int size, ptl_ct_event_t* event,
             unsigned int* which)
{
    Reading reading;
    if (!reading || size > wire::kMaxPollHandles) return false;
    ptl_ct_event_t values[wire::kMaxPollHandles];
    for (unsigned int i = 0; i < size; ++i) {
        wire::CtMirror* c = reading.counter(handles[i]);
        if (!c || !reading.value(*c, handles[i], values[i])) return false;
    }
    for (unsigned int i = 0; i < size; ++i) {
        if (!reached(values[i], tests[i])) continue;
        *event = values[i];
        *which = i;
        reading.answered(false);
        return true;
    }
    return false;
}

}  // namespace s4bxi::interpose::mirror_reads
