// Small transfers that have their links to themselves are computed instead of simulated
// (docs/model.md "Platform": platform.compute_lone_transfers).
//
// SimGrid shares a link's bandwidth among the flows that cross it at the same time
// (CM02, max-min), and each flow is a simulated communication: an activity, a max-min
// variable, a route lookup, several scheduling rounds, about 4 µs of the server's CPU. A
// 64-byte command, a 96-byte event write or a 32-byte BXI ACK pays all that for a few
// nanoseconds of bandwidth, several times per message. Alone on its links, SimGrid would
// give such a flow the route's latency, then the lone-flow rate: that date is computed
// here, and the transfer is a plain sleep (or a timer, for a message nobody waits for).
//
// Every transfer of the NIC model goes through here: the computed ones, and the simulated
// ones between simulated_begins() and simulated_ends(), so that a link's state is known.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

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

class LoneTransfers {
public:
    // Transfers up to this size may be computed. A transfer computed while another one
    // starts sharing its links would have lost (and taken) at most its own bandwidth
    // time: 11.5 ns at this size on the built-in platform. Larger ones are simulated.
    static constexpr uint64_t kLargestComputed = 128;

    void enable(bool on) { enabled_ = on; }
    // A link that may fail: transfers that cross it must fail with it, so are simulated.
    void never_compute_over(simgrid::s4u::Link* link) { links_[link].may_fail = true; }

    // The transfer's duration if it may be computed now: no simulated transfer is on any
    // link it loads (its route, and its reverse route for SimGrid's cross-traffic), and no
    // computed one is in its bandwidth phase there. The links then count it. Nothing
    // otherwise: simulate it, between simulated_begins() and simulated_ends().
    std::optional<double> computed_duration(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes);
    void simulated_begins(simgrid::s4u::Host* from, simgrid::s4u::Host* to);
    void simulated_ends(simgrid::s4u::Host* from, simgrid::s4u::Host* to);

private:
    struct LinkUse {
        int simulated = 0;
        double sharing_until = -1.0;  // end of the last computed transfer's bandwidth phase
        bool may_fail = false;
    };
    struct Route {
        std::optional<LoneFlow> flow;
        std::vector<LinkUse*> links;  // route and reverse route, each link once
    };
    Route& route(simgrid::s4u::Host* from, simgrid::s4u::Host* to);

    // Looked up for every transfer, several times per message: hashed, not a tree.
    struct HostPairHash {
        size_t operator()(const std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>& p) const
        {
            return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
        }
    };

    bool enabled_ = false;
    std::unordered_map<simgrid::s4u::Link*, LinkUse> links_;  // node-based: stable addresses
    std::unordered_map<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>, Route, HostPairHash> routes_;
};

// Counts a simulated transfer on its links until the end of the scope, even when the
// transfer throws (a link went down).
class SimulatedTransfer {
public:
    enum class Since { Now, Earlier };  // Earlier: simulated_begins() was already called
    SimulatedTransfer(LoneTransfers& transfers, simgrid::s4u::Host* from, simgrid::s4u::Host* to,
                      Since since = Since::Now)
        : transfers_(transfers), from_(from), to_(to)
    {
        if (since == Since::Now) transfers_.simulated_begins(from_, to_);
    }
    ~SimulatedTransfer() { transfers_.simulated_ends(from_, to_); }
    SimulatedTransfer(const SimulatedTransfer&) = delete;
    SimulatedTransfer& operator=(const SimulatedTransfer&) = delete;

private:
    LoneTransfers& transfers_;
    simgrid::s4u::Host* from_;
    simgrid::s4u::Host* to_;
};

}  // namespace s4bxi::sim
