#include "run/registry.hpp"

#include <algorithm>

namespace s4bxi::sim {

const char* to_string(RankPhase phase)
{
    switch (phase) {
    case RankPhase::Computing: return "computing";
    case RankPhase::BlockedOutside: return "blocked outside the simulation";
    case RankPhase::Waiting: return "waiting in the simulation";
    case RankPhase::Finished: return "finished";
    case RankPhase::Dead: return "dead";
    }
    return "?";
}

const char* to_string(OutsideWait wait)
{
    switch (wait) {
    case OutsideWait::None: return "none";
    case OutsideWait::Others: return "waits for the other participants";
    case OutsideWait::Hold: return "holds time";
    }
    return "?";
}

RankRecord* Registry::find(int rank)
{
    auto it = std::lower_bound(ranks_.begin(), ranks_.end(), rank, [](const auto& r, int v) { return r->rank < v; });
    return it != ranks_.end() && (*it)->rank == rank ? it->get() : nullptr;
}

RankRecord& Registry::add(std::unique_ptr<RankRecord> record)
{
    auto it = std::lower_bound(ranks_.begin(), ranks_.end(), record->rank,
                               [](const auto& r, int v) { return r->rank < v; });
    return **ranks_.insert(it, std::move(record));
}

}  // namespace s4bxi::sim
