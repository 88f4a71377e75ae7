#include "nic/lone_transfers.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <xbt/config.hpp>

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

// SimGrid's cross-traffic: a flow also loads the links of its reverse route, by this much.
constexpr double kCrossTrafficWeight = 0.05;

// The flow's weight on each link's constraint, combined as SimGrid's max-min system does
// when a link is met twice (route and reverse route): summed on a shared link, the
// largest on a fat pipe.
bool add_weight(std::vector<std::pair<sg4::Link*, double>>& weights, sg4::Link* link, double weight)
{
    auto policy = link->get_sharing_policy();
    if (policy != sg4::Link::SharingPolicy::SHARED && policy != sg4::Link::SharingPolicy::FATPIPE) return false;
    auto it = std::find_if(weights.begin(), weights.end(), [link](const auto& w) { return w.first == link; });
    if (it == weights.end()) {
        weights.emplace_back(link, weight);
    } else if (policy == sg4::Link::SharingPolicy::SHARED) {
        it->second += weight;
    } else {
        it->second = std::max(it->second, weight);
    }
    return true;
}

struct Routes {
    std::vector<sg4::Link*> there;
    std::vector<sg4::Link*> back;
    double latency = 0.0;  // there
};

Routes routes(sg4::Host* from, sg4::Host* to)
{
    Routes r;
    double back_latency = 0.0;
    from->route_to(to, r.there, &r.latency);
    to->route_to(from, r.back, &back_latency);
    return r;
}

// lone_flow() on routes already looked up.
std::optional<LoneFlow> lone_flow_over(const Routes& routes)
{
    namespace config = simgrid::config;
    const std::vector<sg4::Link*>& route = routes.there;
    const double latency = routes.latency;
    // CM02 applies no latency or bandwidth factor and has no weight-S: the route's latency
    // and the max-min bound are the whole story.
    if (route.empty() || config::get_value<std::string>("network/model") != "CM02") return std::nullopt;

    // The flow's own bound: its slowest link, and the TCP window over the round trip.
    double rate = route.front()->get_bandwidth();
    for (sg4::Link* link : route) rate = std::min(rate, link->get_bandwidth());
    double gamma = config::get_value<double>("network/TCP-gamma");
    if (latency > 0 && gamma > 0) rate = std::min(rate, gamma / (2.0 * latency));

    std::vector<std::pair<sg4::Link*, double>> weights;
    for (sg4::Link* link : route)
        if (!add_weight(weights, link, 1.0)) return std::nullopt;
    if (config::get_value<bool>("network/crosstraffic"))
        for (sg4::Link* link : routes.back)
            if (!add_weight(weights, link, kCrossTrafficWeight)) return std::nullopt;
    for (const auto& [link, weight] : weights) rate = std::min(rate, link->get_bandwidth() / weight);
    if (!(rate > 0)) return std::nullopt;
    return LoneFlow{latency, rate};
}

}  // namespace

std::optional<LoneFlow> lone_flow(sg4::Host* from, sg4::Host* to)
{
    if (from == to) return std::nullopt;
    return lone_flow_over(routes(from, to));
}

LoneTransfers::Route& LoneTransfers::route(sg4::Host* from, sg4::Host* to)
{
    auto [it, inserted] = routes_.try_emplace({from, to});
    Route& r = it->second;
    if (!inserted) return r;
    if (from == to) return r;  // no links, no flow to compute
    Routes both = routes(from, to);
    r.flow = lone_flow_over(both);
    std::vector<sg4::Link*> links = both.there;
    links.insert(links.end(), both.back.begin(), both.back.end());
    for (sg4::Link* link : links) {
        LinkUse* use = &links_[link];
        if (std::find(r.links.begin(), r.links.end(), use) == r.links.end()) r.links.push_back(use);
    }
    return r;
}

std::optional<double> LoneTransfers::computed_duration(sg4::Host* from, sg4::Host* to, uint64_t bytes)
{
    if (!enabled_ || bytes > kLargestComputed) return std::nullopt;
    Route& r = route(from, to);
    if (!r.flow) return std::nullopt;
    // A flow shares bandwidth only once its latency is paid (SimGrid gives it no weight
    // before): this one must not reach its bandwidth phase before the last computed one
    // on the same links has left its own.
    double now = sg4::Engine::get_clock();
    for (const LinkUse* use : r.links)
        if (use->may_fail || use->simulated > 0 || now + r.flow->latency < use->sharing_until) return std::nullopt;
    double duration = r.flow->duration(bytes);
    for (LinkUse* use : r.links) use->sharing_until = now + duration;
    return duration;
}

void LoneTransfers::simulated_begins(sg4::Host* from, sg4::Host* to)
{
    for (LinkUse* use : route(from, to).links) ++use->simulated;
}

void LoneTransfers::simulated_ends(sg4::Host* from, sg4::Host* to)
{
    for (LinkUse* use : route(from, to).links) --use->simulated;
}

}  // namespace s4bxi::sim
