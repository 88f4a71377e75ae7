#include "services/outside_wait_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <simgrid/s4u.hpp>
#include <vector>

#include "run/context.hpp"
#include "services/outside_waits.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_outside, "Waits outside the simulation announced by ranks");

namespace s4bxi::sim {

namespace {

FenceBook& fences()
{
    static FenceBook book;
    return book;
}

// The participants of a collective, sorted; empty when the request is malformed or does
// not hold the rank itself.
std::vector<int> participants(const RankRecord& r, const wire::OutsideWaitArgs& args)
{
    std::vector<int> ranks;
    if (args.count == 0) {
        for (int rank = 0; rank < context().config.world_size; ++rank) ranks.push_back(rank);
    } else if (args.count <= wire::kMaxOutsideParticipants) {
        ranks.assign(args.ranks, args.ranks + args.count);
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    }
    if (!std::binary_search(ranks.begin(), ranks.end(), r.rank)) ranks.clear();
    return ranks;
}

void hold(RankRecord& r)
{
    r.outside_wait = OutsideWait::Hold;
    r.outside_since_wall = wall_now();
}

}  // namespace

int announce_outside_wait(RankRecord& r, const wire::OutsideWaitArgs& args)
{
    r.outside_what = std::string(args.what, strnlen(args.what, sizeof args.what));
    switch (static_cast<wire::OutsideWaitKind>(args.kind)) {
    case wire::OutsideWaitKind::Local: hold(r); break;
    case wire::OutsideWaitKind::Collective: {
        std::vector<int> ranks = participants(r, args);
        if (ranks.empty()) {
            XBT_WARN("rank %d: %s among ranks it is not part of; treated as an unknown wait", r.rank,
                     r.outside_what.c_str());
            r.outside_wait = OutsideWait::Others;
            break;
        }
        FenceBook::Arrival arrival = fences().arrive(r.rank, ranks);
        XBT_DEBUG("rank %d enters %s %llu of %zu ranks (%zu arrived)", r.rank, r.outside_what.c_str(),
                  static_cast<unsigned long long>(arrival.fence), ranks.size(), arrival.arrived);
        r.outside_what += fmt::format(" (fence {} of {} ranks, {} arrived)", arrival.fence, ranks.size(), arrival.arrived);
        r.outside_wait = OutsideWait::Others;
        if (!arrival.complete) break;
        // Everyone is in: they all leave at this date, whatever real time PMIx takes.
        for (int rank : ranks) {
            RankRecord* other = context().registry.find(rank);
            if (other && other->outside_wait == OutsideWait::Others) hold(*other);
        }
        break;
    }
    default: r.outside_wait = OutsideWait::Others; break;
    }
    return 0;
}

void end_outside_wait(RankRecord& r)
{
    r.outside_wait = OutsideWait::None;
}

std::string describe_outside_wait(const RankRecord& r)
{
    if (r.outside_wait == OutsideWait::None) return "";
    return fmt::format("{} outside the simulation ({})", r.outside_what, to_string(r.outside_wait));
}

}  // namespace s4bxi::sim
