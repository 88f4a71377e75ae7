// What the summary adds about the ranks' communication (timeline.hpp, add_to_summary):
// the communication matrix, the MPI calls per function and rank, the time each rank spent
// blocked in a wait. Counted whether a timeline is written or not.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace s4bxi::sim::observe {

// Portals calls that wait for something to arrive (and PMI_Barrier).
bool blocking_wait(uint32_t op);

class RunStatistics {
public:
    void dispatched(int rank, double now);
    void served(int rank, uint32_t op, double now);
    void mpi_total(int rank, uint32_t function, uint64_t calls, double time, uint64_t bytes);
    // A data operation from `source` to `destination` (-1: not a rank of the run) carrying
    // `bytes` of payload from the initiator (0 for a Get).
    void message(int source, int destination, uint64_t bytes);
    // The rank at this NIC and Portals PID (-1: none).
    int rank_of(uint32_t nid, uint32_t pid);
    void add_to_summary(nlohmann::json& summary) const;

private:
    struct PerRank {
        double dispatched_at = 0.0;
        double wait_time = 0.0;
    };
    struct Pair {
        uint64_t messages = 0;
        uint64_t bytes = 0;
    };
    struct MpiTotal {
        uint64_t calls = 0;
        double time = 0.0;
        uint64_t bytes = 0;
    };
    PerRank& rank(int r);

    std::vector<PerRank> ranks_;
    std::map<std::pair<int, int>, Pair> matrix_;
    std::map<uint32_t, std::map<int, MpiTotal>> mpi_;  // function -> rank -> totals
    std::unordered_map<uint64_t, int> rank_at_;        // (nid << 32 | pid) -> rank
};

RunStatistics& statistics();

}  // namespace s4bxi::sim::observe
