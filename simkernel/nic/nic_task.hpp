// The NIC's work as C++ coroutines: an engine's handling of a message reads as a sequence
// (co_await a delay, a PCIe transfer, a free E2E entry), and each wait is a step of the
// instant order (instant_order.hpp), resumed by a kernel timer or an activity's
// completion, never an actor's turn. The same code serves a rank's proxy, an actor: there
// every wait blocks the actor, as a SimGrid call does, and the coroutine never suspends
// (an event write in PtlMEAppend, for instance).
#pragma once

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

#include <simgrid/s4u.hpp>

#include "nic/instant_order.hpp"

namespace s4bxi::sim {

// True while a step of the instant order runs (in the SimGrid kernel), false in an actor
// (a proxy). Read from the order itself: SimGrid's Actor::is_maestro() costs two calls into
// its library, and the engines ask at every wait.
inline bool in_nic_step()
{
    return instant_order().running();
}

namespace task_detail {

struct PromiseBase {
    std::coroutine_handle<> continuation;
    std::exception_ptr error;
    std::suspend_always initial_suspend() noexcept { return {}; }
    struct Final {
        bool await_ready() noexcept { return false; }
        template <class P>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<P> done) noexcept
        {
            auto next = done.promise().continuation;
            return next ? next : std::noop_coroutine();
        }
        void await_resume() noexcept {}
    };
    Final final_suspend() noexcept { return {}; }
    void unhandled_exception() { error = std::current_exception(); }
};

template <class T>
struct Promise : PromiseBase {
    std::optional<T> value;
    void return_value(T v) { value = std::move(v); }
};

template <>
struct Promise<void> : PromiseBase {
    void return_void() {}
};

}  // namespace task_detail

// A piece of the NIC's work, started when awaited (or spawned), returning T.
template <class T = void>
class [[nodiscard]] NicTask {
public:
    struct promise_type : task_detail::Promise<T> {
        NicTask get_return_object() { return NicTask{std::coroutine_handle<promise_type>::from_promise(*this)}; }
    };
    using Handle = std::coroutine_handle<promise_type>;

    explicit NicTask(Handle h) : h_(h) {}
    NicTask(NicTask&& other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    NicTask(const NicTask&) = delete;
    NicTask& operator=(const NicTask&) = delete;
    NicTask& operator=(NicTask&&) = delete;
    ~NicTask()
    {
        if (h_) h_.destroy();
    }

    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept
    {
        h_.promise().continuation = awaiting;
        return h_;
    }
    T await_resume()
    {
        if (h_.promise().error) std::rethrow_exception(h_.promise().error);
        if constexpr (!std::is_void_v<T>) return std::move(*h_.promise().value);
    }

    // In an actor (a proxy): runs the task to its end, its waits blocking the actor, and
    // returns its result or throws its exception.
    T run_in_actor()
    {
        h_.resume();
        if (!h_.done()) std::terminate();  // it waited for a step: a proxy cannot
        return await_resume();
    }

private:
    Handle h_;
};

namespace task_detail {
struct Detached {
    struct promise_type {
        Detached get_return_object() { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() {}
        void unhandled_exception() { std::terminate(); }
    };
};
// Its own frame ends with the task: nobody awaits a spawned task.
inline Detached run_detached(NicTask<> task)
{
    co_await task;
}
}  // namespace task_detail

// Starts `task` now. In a step it goes on through later steps on its own; in an actor it
// has run to its end when this returns (its waits blocked the actor).
inline void spawn(NicTask<> task)
{
    task_detail::run_detached(std::move(task));
}

// A wait of `seconds` of simulated time: the next step at that date, or, in an actor, a
// sleep.
struct Delay {
    double seconds;
    bool await_ready() const noexcept { return false; }
    bool await_suspend(std::coroutine_handle<> waiter);
    void await_resume() const noexcept {}
};
inline Delay delay(double seconds)
{
    return Delay{seconds};
}

}  // namespace s4bxi::sim
