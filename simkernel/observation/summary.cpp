#include "observation/summary.hpp"

#include <algorithm>
#include <fstream>

#include "host/process_memory.hpp"
#include "observation/timeline.hpp"
#include "platform/platform.hpp"
#include "run/context.hpp"
#include "s4bxi/summary_keys.hpp"
#include "services/rank_delivery.hpp"

namespace s4bxi::sim {

namespace summary = s4bxi::summary;
namespace key = s4bxi::summary::key;

nlohmann::json make_summary(const Context& ctx, double makespan, const NetworkTotals& network, const PlatformSpec& platform)
{
    auto origin = platform.origins.find("platform.nodes");
    nlohmann::json platform_json = {{key::name, platform.name},
                                    {key::source, platform.source},
                                    {key::nodes, platform.nodes},
                                    {key::cores_per_node, platform.cores_per_node},
                                    {key::topology, platform.topology},
                                    {key::network_model, platform.network_model},
                                    {key::network_switch, platform.network_switch},
                                    {key::nodes_from, origin == platform.origins.end() ? "default" : origin->second}};
    nlohmann::json ranks = nlohmann::json::array();
    uint64_t operations = 0, local = 0, posted = 0, largest_rank_peak = 0;
    RankRecord::HostDecisions decisions;
    auto decisions_json = [](const RankRecord::HostDecisions& d) {
        return nlohmann::json{{key::memory_waits, d.memory_waits},
                              {key::memory_waits_by_reads, d.memory_waits_by_reads},
                              {key::blocked_outside, d.blocked_outside},
                              {key::lockstep_idles, d.lockstep_idles}};
    };
    auto load_json = [](const HostLoad& l) { return nlohmann::json::array({l.one, l.five, l.fifteen}); };
    for (const auto& r : const_cast<Context&>(ctx).registry.ranks()) {
        decisions += r->host_decisions;
        operations += r->portals_ops;
        local += r->portals_local_ops;
        posted += r->posted_served;
        largest_rank_peak = std::max(largest_rank_peak, r->peak_resident_bytes);
        ranks.push_back({{key::rank, r->rank},
                         {key::pid, r->pid},
                         {key::nid, r->nid},
                         {key::node, r->node_name},
                         {key::core, r->core},
                         {key::end_time, r->end_time},
                         {key::portals_ops, r->portals_ops},
                         {key::portals_local_ops, r->portals_local_ops},
                         {key::portals_posted, r->posted_served},
                         {key::messages_sent, r->messages_sent},
                         {key::bytes_sent, r->bytes_sent},
                         {key::compute_time, std::max(0.0, r->compute_time - r->mpi_library_time)},
                         {key::mpi_library_time, r->mpi_library_time},
                         {key::portals_time, r->portals_time},
                         {key::sleep_time, r->sleep_time},
                         {key::peak_rss, r->peak_resident_bytes},
                         {key::involuntary_switches, r->involuntary_switches},
                         {key::host_decisions, decisions_json(r->host_decisions)},
                         {key::finished, r->phase == RankPhase::Finished}});
    }
    nlohmann::json summary = {{key::version, summary::kVersion},
            {key::status, ctx.outcome.status},
            {key::message, ctx.outcome.message},
            {key::world_size, ctx.registry.size()},
            {key::platform, platform_json},
            {key::makespan, makespan},
            {key::portals_ops, operations},
            {key::portals_local_ops, local},
            {key::portals_posted, posted},
            {key::bytes_moved, network.bytes_moved},
            {key::retransmissions, network.retransmissions},
            {key::undeliverable, network.undeliverable},
            {key::payloads_copied_once, delivery_stats().orders},
            {key::payload_copy_fallbacks, delivery_stats().fallbacks},
            {key::server_peak_rss, server_peak_resident_bytes()},
            {key::host_load, {{key::at_start, load_json(ctx.host_load_at_start)}, {key::at_end, load_json(host_load())}}},
            {key::largest_rank_peak_rss, largest_rank_peak},
            {key::host_decisions, decisions_json(decisions)},
            {key::ranks, ranks}};
    if (!network.network_models.is_null()) summary[key::network_models] = network.network_models;
    if (ctx.outcome.abort_status >= 0) summary[key::abort_status] = ctx.outcome.abort_status;
    observe::add_to_summary(summary);
    return summary;
}

void write_summary(const nlohmann::json& summary, const std::string& path)
{
    if (path.empty()) return;
    std::ofstream out(path);
    out << summary.dump(2) << '\n';
}

}  // namespace s4bxi::sim
