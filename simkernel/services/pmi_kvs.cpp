#include "services/pmi_kvs.hpp"

namespace s4bxi::sim {

void PmiKvs::put(std::string_view name, std::string_view key, std::string_view value)
{
    entries_.insert_or_assign(std::pair(std::string(name), std::string(key)), std::string(value));
}

std::optional<std::string> PmiKvs::get(std::string_view name, std::string_view key) const
{
    auto found = entries_.find(std::pair(std::string(name), std::string(key)));
    if (found == entries_.end()) return std::nullopt;
    return found->second;
}

PmiBarrierRounds::Arrival PmiBarrierRounds::arrive(int world)
{
    Arrival arrival{completed_, false};
    if (++arrived_ >= world) {
        arrived_ = 0;
        ++completed_;
        arrival.last = true;
    }
    return arrival;
}

}  // namespace s4bxi::sim
