#include "services/outside_waits.hpp"

namespace s4bxi::sim {

FenceBook::Arrival FenceBook::arrive(int rank, const std::vector<int>& participants)
{
    auto& entered = entered_[participants];
    uint64_t fence = ++entered[rank];
    size_t arrived = 0;
    for (int p : participants) {
        auto it = entered.find(p);
        if (it != entered.end() && it->second >= fence) ++arrived;
    }
    return {arrived == participants.size(), fence, arrived};
}

}  // namespace s4bxi::sim
