#include "observation/run_statistics.hpp"

#include <algorithm>

#include "portals/portals_state.hpp"
#include "run/context.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/summary_keys.hpp"

namespace s4bxi::sim::observe {

namespace summary = s4bxi::summary;
namespace key = s4bxi::summary::key;

RunStatistics& statistics()
{
    static RunStatistics s;
    return s;
}

RunStatistics::PerRank& RunStatistics::rank(int r)
{
    if (r >= static_cast<int>(ranks_.size())) ranks_.resize(static_cast<size_t>(r) + 1);
    return ranks_[static_cast<size_t>(r)];
}

void RunStatistics::dispatched(int r, double now)
{
    rank(r).dispatched_at = now;
}

void RunStatistics::served(int r, uint32_t op, double now)
{
    if (!blocking_wait(op)) return;
    PerRank& p = rank(r);
    p.wait_time += now - p.dispatched_at;
}

void RunStatistics::mpi_total(int r, uint32_t function, uint64_t calls, double time, uint64_t bytes)
{
    MpiTotal& total = mpi_[function][r];
    total.calls += calls;
    total.time += time;
    total.bytes += bytes;
}

void RunStatistics::message(int source, int destination, uint64_t bytes)
{
    Pair& pair = matrix_[{source, destination}];
    ++pair.messages;
    pair.bytes += bytes;
}

int RunStatistics::rank_of(uint32_t nid, uint32_t pid)
{
    uint64_t key = (static_cast<uint64_t>(nid) << 32) | pid;
    if (auto it = rank_at_.find(key); it != rank_at_.end()) return it->second;
    const RankRecord* only = nullptr;
    int on_node = 0;
    for (const auto& r : context().registry.ranks()) {
        if (r->nid != nid) continue;
        ++on_node;
        only = r.get();
        if (!r->portals) continue;
        for (const NetworkInterface& ni : r->portals->nis)
            if (ni.used && ni.pid == pid) return rank_at_[key] = r->rank;
    }
    if (on_node == 1) return rank_at_[key] = only->rank;
    return -1;
}

void RunStatistics::add_to_summary(nlohmann::json& summary) const
{
    nlohmann::json pairs = nlohmann::json::array();
    for (const auto& [key, pair] : matrix_)
        pairs.push_back({{key::source, key.first}, {key::destination, key.second}, {key::messages, pair.messages},
                         {key::bytes, pair.bytes}});
    summary[key::communication] = pairs;

    std::map<int, double> mpi_time;
    std::vector<nlohmann::json> functions;
    for (const auto& [function, by_rank] : mpi_) {
        MpiTotal sum;
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& [r, total] : by_rank) {
            sum.calls += total.calls;
            sum.time += total.time;
            sum.bytes += total.bytes;
            mpi_time[r] += total.time;
            ranks.push_back({{key::rank, r}, {key::calls, total.calls}, {key::time, total.time}, {key::bytes, total.bytes}});
        }
        functions.push_back({{key::function, wire::kMpiFunctions[function]},
                             {key::calls, sum.calls},
                             {key::time, sum.time},
                             {key::bytes, sum.bytes},
                             {key::ranks, ranks}});
    }
    std::stable_sort(functions.begin(), functions.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
        return a[key::time].get<double>() > b[key::time].get<double>();
    });
    summary[key::mpi] = functions;

    for (nlohmann::json& r : summary[key::ranks]) {
        int id = r[key::rank].get<int>();
        r[key::wait_time] = id < static_cast<int>(ranks_.size()) ? ranks_[static_cast<size_t>(id)].wait_time : 0.0;
        auto it = mpi_time.find(id);
        r[key::mpi_time] = it == mpi_time.end() ? 0.0 : it->second;
    }
}

void add_to_summary(nlohmann::json& summary)
{
    statistics().add_to_summary(summary);
}

}  // namespace s4bxi::sim::observe
