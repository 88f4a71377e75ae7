// The calls on event queues and counters: allocation, gets, waits and polls (with the
// fast-forward of empty polls), counter updates.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "calls/call.hpp"

namespace s4bxi::sim::engine {

int Call::eq_alloc()
{
    const auto& a = args<wire::EQAllocArgs>();
    NetworkInterface* n = ni(a.ni);
    if (!n) return PTL_ARG_INVALID;
    uint32_t handle = allocate(p_.eqs, HandleKind::EQ, n->limits.max_eqs);
    if (handle == PTL_INVALID_HANDLE) return PTL_NO_SPACE;
    management_command();
    uint32_t index = handle_index(handle);
    p_.eqs[index].open(n->index, a.count, handle, p_.eq_mirror(index), p_.replies());
    out<wire::HandleReply>().handle = handle;
    return PTL_OK;
}

int Call::eq_free()
{
    EventQueue* q = eq(args<wire::HandleArgs>().handle);
    if (!q) return PTL_ARG_INVALID;
    management_command();
    q->close();
    p_.activity->notify_all();  // another thread's wait on it returns PTL_INTERRUPTED
    return PTL_OK;
}

// Waits for the first visible event of any of `handles`, until `deadline` (< 0: forever).
// A non-blocking poll (PtlEQGet, PtlEQPoll with timeout 0) never blocks the program, but
// an empty one fast-forwards: the rank waits in simulated time for the next event in any
// of its queues or one polling quantum, which is what a real polling loop would have spent
// (docs/design.md "Polling"). The quantum grows while polls find nothing and resets on an event.
int Call::wait_events(const uint32_t* handles, uint32_t count, uint32_t timeout_ms, const char* what)
{
    for (uint32_t i = 0; i < count; ++i)
        if (!eq(handles[i])) return PTL_ARG_INVALID;
    bool polling = timeout_ms == 0;
    EmptyPoll poll = polling ? begin_empty_poll() : EmptyPoll{-1.0, 0, -1.0};
    std::optional<PollInProgress> in_poll;
    if (polling) in_poll.emplace(p_, poll.deadline);
    double deadline = polling ? -1.0 : poll_deadline(timeout_ms);
    r_.waiting_on.set([what, first = handles[0], count] {
        return count == 1 ? fmt::format("{}(eq {:#x})", what, first) : fmt::format("{}({} queues)", what, count);
    });
    struct LookedAtEvents {  // whatever the answer, the rank has now read its queues
        RankPortals& p;
        ~LookedAtEvents() { set_events_looked(p, p.events); }
    } looked{p_};
    std::unique_lock lock(*p_.mutex);
    for (bool first = true;; first = false) {
        double earliest = -1;
        for (uint32_t i = 0; i < count; ++i) {
            EventQueue* q = eq(handles[i]);
            // Freed meanwhile, by another thread (PtlEQFree, PtlNIFini): the specification's
            // PTL_INTERRUPTED for a blocking wait.
            if (!q) return polling ? PTL_ARG_INVALID : PTL_INTERRUPTED;
            ptl_event_t event;
            double next_visible;
            if (take_event(*q, event, next_visible)) return finish_event(*q, event, i);
            if (next_visible >= 0 && (earliest < 0 || next_visible < earliest)) earliest = next_visible;
        }
        if (polling && first && r_.free_empty_poll) {  // another thread holds the rank's time
            r_.answered_free = true;
            return PTL_EQ_EMPTY;
        }
        // An unseen event elsewhere: the loop will take it on its next round (and count it
        // as work then, if it is: is_work()). No fast-forward, and no step growth.
        if (polling && first && unseen_event_visible()) return PTL_EQ_EMPTY;
        if (timed_out(deadline)) break;
        if (in_poll && in_poll->ended()) break;
        double until = deadline;
        if (earliest >= 0 && (until < 0 || earliest < until)) until = earliest;
        if (polling && arrival_visible(poll, until)) {  // work elsewhere: let the loop see it
            poll_found_work();
            return PTL_EQ_EMPTY;
        }
        if (wait_for_activity(lock, until) && !polling) return PTL_INTERRUPTED;
    }
    if (polling) poll_found_nothing();
    return PTL_EQ_EMPTY;
}

int Call::eq_get(bool wait)
{
    uint32_t handle = args<wire::HandleArgs>().handle;
    return wait_events(&handle, 1, wait ? PTL_TIME_FOREVER : 0, wait ? "PtlEQWait" : "PtlEQGet");
}

int Call::eq_poll()
{
    const auto& a = args<wire::EQPollArgs>();
    if (a.size == 0 || a.size > wire::kMaxPollHandles) return PTL_ARG_INVALID;
    return wait_events(a.handles, a.size, a.timeout_ms, "PtlEQPoll");
}

int Call::ct_alloc()
{
    NetworkInterface* n = ni(args<wire::HandleArgs>().handle);
    if (!n) return PTL_ARG_INVALID;
    uint32_t handle = allocate(p_.cts, HandleKind::CT, n->limits.max_cts);
    if (handle == PTL_INVALID_HANDLE) return PTL_NO_SPACE;
    management_command();
    uint32_t index = handle_index(handle);
    p_.cts[index].open(n->index, handle, p_.ct_mirror(index), p_.replies());
    out<wire::HandleReply>().handle = handle;
    return PTL_OK;
}

int Call::ct_free()
{
    Counter* c = ct(args<wire::HandleArgs>().handle);
    if (!c) return PTL_ARG_INVALID;
    management_command();
    c->close();
    p_.activity->notify_all();  // another thread's wait on it returns PTL_INTERRUPTED
    return PTL_OK;
}

// A PtlCTGet that reads the value the previous one returned is a polling loop's empty
// poll: like an empty PtlEQGet it fast-forwards, until the counter changes or one polling
// quantum passes. Without it, a loop on PtlCTGet would spin with simulated time frozen.
int Call::ct_get()
{
    uint32_t handle = args<wire::HandleArgs>().handle;
    Counter* c = ct(handle);
    if (!c) return PTL_ARG_INVALID;
    auto unchanged = [](const Counter& counter) {
        ptl_ct_event_t read = counter.last_read();
        return counter.value.success == read.success && counter.value.failure == read.failure;
    };
    if (unchanged(*c) && r_.free_empty_poll) {
        r_.answered_free = true;  // another thread holds the rank's time
    } else if (unchanged(*c)) {
        r_.waiting_on.set([handle, success = c->value.success] {
            return fmt::format("PtlCTGet(ct {:#x}) with the counter at {}", handle, success);
        });
        EmptyPoll poll = begin_empty_poll();
        PollInProgress in_poll(p_, poll.deadline);
        bool elsewhere = false;
        std::unique_lock lock(*p_.mutex);
        while ((c = ct(handle)) != nullptr && unchanged(*c) && !in_poll.ended()) {
            double until = -1.0;
            if ((elsewhere = arrival_visible(poll, until))) break;
            wait_for_activity(lock, until);
        }
        if (!c) return PTL_ARG_INVALID;  // freed meanwhile
        if (unchanged(*c) && !elsewhere) poll_found_nothing();
        else poll_found_work();
    } else {
        poll_found_work();
    }
    c->set_last_read(c->value);
    auto& reply = out<wire::CTReply>();
    reply.success = c->value.success;
    reply.failure = c->value.failure;
    return PTL_OK;
}

int Call::ct_wait()
{
    const auto& a = args<wire::CTArgs>();
    std::unique_lock lock(*p_.mutex);
    for (bool first = true;; first = false) {
        Counter* c = ct(a.ct);
        if (!c) return first ? PTL_ARG_INVALID : PTL_INTERRUPTED;  // freed meanwhile: PtlCTFree, PtlNIFini
        r_.waiting_on.set([a, value = c->value] {
            return fmt::format("PtlCTWait(ct {:#x}, test {}) with the counter at {} (failures {})", a.ct, a.success,
                               value.success, value.failure);
        });
        if (c->value.success >= a.success || c->value.failure > 0) {
            auto& reply = out<wire::CTReply>();
            reply.success = c->value.success;
            reply.failure = c->value.failure;
            return PTL_OK;
        }
        if (wait_for_activity(lock, -1)) return PTL_INTERRUPTED;
    }
}

int Call::ct_poll()
{
    const auto& a = args<wire::CTPollArgs>();
    if (a.size == 0 || a.size > wire::kMaxPollHandles) return PTL_ARG_INVALID;
    double deadline = poll_deadline(a.timeout_ms);
    r_.waiting_on.set([size = a.size] { return fmt::format("PtlCTPoll({} counters)", size); });
    std::unique_lock lock(*p_.mutex);
    for (bool first = true;; first = false) {
        for (uint32_t i = 0; i < a.size; ++i) {
            Counter* c = ct(a.handles[i]);
            if (!c) return first ? PTL_ARG_INVALID : PTL_INTERRUPTED;  // freed meanwhile
            if (c->value.success >= a.tests[i] || c->value.failure > 0) {
                auto& reply = out<wire::CTReply>();
                reply.success = c->value.success;
                reply.failure = c->value.failure;
                reply.which = i;
                return PTL_OK;
            }
        }
        if (timed_out(deadline)) return PTL_CT_NONE_REACHED;
        if (wait_for_activity(lock, deadline)) return PTL_INTERRUPTED;
    }
}

int Call::ct_update(bool set)
{
    const auto& a = args<wire::CTArgs>();
    if (!ct(a.ct)) return PTL_ARG_INVALID;
    if (!set && a.success != 0 && a.failure != 0) return PTL_ARG_INVALID;  // one of the two, as the reference checks
    if (set) set_counter(p_, a.ct, {a.success, a.failure});
    else count_event(p_, a.ct, a.success, a.failure);
    return PTL_OK;
}
}  // namespace s4bxi::sim::engine
