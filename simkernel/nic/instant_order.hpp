// The model's order within a simulated instant (docs/model.md "Same-instant order"): the
// NIC's work is a set of steps, each due at a date and owned by one engine of one node,
// done in the order (date, node, engine, scheduling order), whatever the SimGrid kernel
// does around them. The engines are coroutines (nic_task.hpp) that these steps resume; no
// NIC step is an actor's turn.
#pragma once

#include <coroutine>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace simgrid::kernel::timer {
class Timer;
}

namespace s4bxi::sim {

// The engines of a node, in the order their steps of one instant are done: TX engines by
// virtual network, then the BXI ACK lanes, then RX engines, then the E2E timer's work.
enum class NicEngine : uint32_t { Tx = 0, AckLane = 4, Rx = 8, Reliability = 12 };

struct StepOwner {
    uint32_t node = 0;
    uint32_t engine = 0;
    static StepOwner of(uint32_t node, NicEngine engine, uint32_t vn = 0)
    {
        return {node, static_cast<uint32_t>(engine) + vn};
    }
};

class InstantOrder {
public:
    // Does `step` at simulated `date` (the current date if earlier), in the order above.
    void at(double date, StepOwner owner, std::function<void()> step);
    void resume_at(double date, StepOwner owner, std::coroutine_handle<> waiter)
    {
        at(date, owner, [waiter] { waiter.resume(); });
    }
    // The owner of the step being done: a coroutine that waits schedules its next step as
    // its own. Work started outside a step (a kernel timer's) names its owner first.
    StepOwner current() const { return current_; }
    void set_current(StepOwner owner) { current_ = owner; }
    // The run is over (its last rank ended): nothing more is done, no timer is left.
    void stop();
    // A new run in this process (unit tests run several).
    void reset();
    bool running() const { return running_; }

private:
    struct Step {
        double date;
        StepOwner owner;
        uint64_t seq;
        std::function<void()> run;
    };
    struct Later {
        bool operator()(const Step& a, const Step& b) const
        {
            if (a.date != b.date) return a.date > b.date;
            if (a.owner.node != b.owner.node) return a.owner.node > b.owner.node;
            if (a.owner.engine != b.owner.engine) return a.owner.engine > b.owner.engine;
            return a.seq > b.seq;
        }
    };
    void arm();
    void run_due(double date);

    std::priority_queue<Step, std::vector<Step>, Later> due_;
    uint64_t next_seq_ = 0;
    simgrid::kernel::timer::Timer* timer_ = nullptr;
    double timer_date_ = -1.0;
    StepOwner current_{};
    double current_date_ = 0.0;  // of the step being done
    double limit_ = 0.0;         // of the pass being done
    bool running_ = false;
    bool stopped_ = false;
};

InstantOrder& instant_order();

}  // namespace s4bxi::sim
