// A node's PCIe bus, as the NIC model's transfers use it: when a small transfer has the
// bus to itself, its time is computed instead of simulated (docs/model.md "PCIe").
//
// SimGrid shares a link's bandwidth among the flows that cross it at the same time
// (CM02, max-min), and each flow is a simulated communication: an activity, a max-min
// variable, a route lookup, some scheduling rounds. A 64-byte command or a 96-byte event
// write pays all that for a few nanoseconds of bandwidth, on every message. Alone on the
// bus, SimGrid would give it the route's latency, then the lone-flow rate: the bus
// computes that date and the transfer is a plain sleep.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include <simgrid/s4u.hpp>

namespace s4bxi::sim {

// How SimGrid times a flow from `from` to `to` that is alone on its links.
struct LoneFlow {
    double latency = 0.0;  // s, the route's
    double rate = 0.0;     // B/s once the latency is paid
    double duration(uint64_t bytes) const { return latency + static_cast<double>(bytes) / rate; }
};

// Derived from the routes and the engine's network settings (CM02, cross-traffic, TCP
// gamma); nothing when they are settings the derivation does not cover.
std::optional<LoneFlow> lone_flow(simgrid::s4u::Host* from, simgrid::s4u::Host* to);

class PcieBus {
public:
    // Transfers up to this size may be computed. A transfer computed while another one
    // starts sharing the bus would have lost (and taken) at most its own bandwidth time:
    // 11.5 ns at this size on the built-in platform. Larger ones are always simulated.
    static constexpr uint64_t kLargestComputed = 128;

    void enable(bool on) { enabled_ = on; }

    // The transfer's duration if it may be computed now (the bus carries no simulated
    // transfer, and no computed one is in its bandwidth phase): the bus then counts it.
    // Nothing otherwise: simulate it, between simulated_begins() and simulated_ends().
    std::optional<double> computed_duration(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes);
    void simulated_begins() { ++simulated_; }
    void simulated_ends() { --simulated_; }

private:
    bool enabled_ = false;
    int simulated_ = 0;
    double sharing_until_ = -1.0;  // end of the last computed transfer's bandwidth phase
    std::map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, std::optional<LoneFlow>> flows_;
};

// Counts a simulated transfer on its bus until the end of the scope, even when the
// transfer throws (its link went down).
class SimulatedOnBus {
public:
    enum class Since { Now, Earlier };  // Earlier: simulated_begins() was already called
    explicit SimulatedOnBus(PcieBus& bus, Since since = Since::Now) : bus_(bus)
    {
        if (since == Since::Now) bus_.simulated_begins();
    }
    ~SimulatedOnBus() { bus_.simulated_ends(); }
    SimulatedOnBus(const SimulatedOnBus&) = delete;
    SimulatedOnBus& operator=(const SimulatedOnBus&) = delete;

private:
    PcieBus& bus_;
};

}  // namespace s4bxi::sim
