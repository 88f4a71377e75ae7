#include "nic/instant_order.hpp"

#include "nic/nic_task.hpp"

#include <algorithm>
#include <utility>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u.hpp>

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

InstantOrder& instant_order()
{
    static InstantOrder order;
    return order;
}

void InstantOrder::at(double date, StepOwner owner, std::function<void()> step)
{
    if (stopped_) return;
    // Due within the pass being done (the clock and a step's date may differ in their last
    // bit): at the date of the step being done, in the same pass.
    if (running_ && date <= limit_) date = current_date_;
    due_.push(Step{date, owner, next_seq_++, std::move(step)});
    if (!running_) arm();
}

// One kernel timer, at the earliest step's date. SimGrid runs the timers of a date before
// it wakes the actors whose activities end then, and a timer set for the current date in
// the next round of that date: the rounds of an instant (docs/model.md).
void InstantOrder::arm()
{
    if (due_.empty()) return;
    double date = std::max(due_.top().date, sg4::Engine::get_clock());
    if (timer_ && timer_date_ <= date) return;
    if (timer_) timer_->remove();
    timer_date_ = date;
    timer_ = simgrid::kernel::timer::Timer::set(date, [this, date] {
        timer_ = nullptr;
        run_due(date);
    });
}

void InstantOrder::run_due(double date)
{
    // The clock and the timer's date may differ in their last bit.
    limit_ = std::max(date, sg4::Engine::get_clock());
    running_ = true;
    while (!due_.empty() && due_.top().date <= limit_) {
        Step step = std::move(const_cast<Step&>(due_.top()));
        due_.pop();
        current_ = step.owner;
        current_date_ = step.date;
        step.run();
        if (stopped_) break;
    }
    running_ = false;
    arm();
}

bool Delay::await_suspend(std::coroutine_handle<> waiter)
{
    if (!in_nic_step()) {
        sg4::this_actor::sleep_for(seconds);
        return false;
    }
    InstantOrder& order = instant_order();
    order.resume_at(sg4::Engine::get_clock() + seconds, order.current(), waiter);
    return true;
}

void InstantOrder::stop()
{
    stopped_ = true;
    if (timer_) timer_->remove();
    timer_ = nullptr;
    due_ = {};
}

void InstantOrder::reset()
{
    due_ = {};
    next_seq_ = 0;
    timer_ = nullptr;
    timer_date_ = -1.0;
    current_ = {};
    current_date_ = 0.0;
    limit_ = 0.0;
    running_ = false;
    stopped_ = false;
}

}  // namespace s4bxi::sim
