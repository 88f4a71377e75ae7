// The PMI-1 state of a run as pure logic (no simulation): the key-value space the ranks
// exchange their addresses through, and the rounds of PMI_Barrier. pmi_service.cpp puts
// them in simulated time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace s4bxi::sim {

class PmiKvs {
public:
    // A second put of a key replaces its value: PMI-1 leaves it undefined, and replacing
    // is what lets a program publish a corrected address.
    void put(std::string_view name, std::string_view key, std::string_view value);
    std::optional<std::string> get(std::string_view name, std::string_view key) const;
    size_t size() const { return entries_.size(); }

private:
    std::map<std::pair<std::string, std::string>, std::string, std::less<>> entries_;
};

// Successive barriers of the whole world: round r ends when `world` ranks have arrived
// since round r-1 ended. A rank waits until completed() passes the round it joined.
class PmiBarrierRounds {
public:
    struct Arrival {
        uint64_t round;  // the round the rank joined
        bool last;       // it completed that round: nobody waits any more
    };
    Arrival arrive(int world);
    uint64_t completed() const { return completed_; }
    int arrived() const { return arrived_; }

private:
    uint64_t completed_ = 0;
    int arrived_ = 0;
};

}  // namespace s4bxi::sim
