#include "observation/summary.hpp"

#include <algorithm>
#include <fstream>

#include "context.hpp"
#include "observation/timeline.hpp"
#include "platform/platform.hpp"
#include "services/process_memory.hpp"
#include "services/rank_delivery.hpp"

namespace s4bxi::sim {

nlohmann::json make_summary(const Context& ctx, double makespan, const NetworkTotals& network, const PlatformSpec& platform)
{
    auto origin = platform.origins.find("platform.nodes");
    nlohmann::json platform_json = {{"name", platform.name},
                                    {"source", platform.source},
                                    {"nodes", platform.nodes},
                                    {"cores_per_node", platform.cores_per_node},
                                    {"topology", platform.topology},
                                    {"nodes_from", origin == platform.origins.end() ? "default" : origin->second}};
    nlohmann::json ranks = nlohmann::json::array();
    uint64_t operations = 0, local = 0, posted = 0, largest_rank_peak = 0;
    RankRecord::HostDecisions decisions;
    auto decisions_json = [](const RankRecord::HostDecisions& d) {
        return nlohmann::json{{"memory_waits", d.memory_waits},
                              {"blocked_outside", d.blocked_outside},
                              {"lockstep_idles", d.lockstep_idles}};
    };
    auto load_json = [](const HostLoad& l) { return nlohmann::json::array({l.one, l.five, l.fifteen}); };
    for (const auto& r : const_cast<Context&>(ctx).registry.ranks()) {
        decisions += r->host_decisions;
        operations += r->portals_ops;
        local += r->portals_local_ops;
        posted += r->posted_served;
        largest_rank_peak = std::max(largest_rank_peak, r->peak_resident_bytes);
        ranks.push_back({{"rank", r->rank},
                         {"pid", r->pid},
                         {"nid", r->nid},
                         {"node", r->node_name},
                         {"core", r->core},
                         {"end_time", r->end_time},
                         {"portals_ops", r->portals_ops},
                         {"portals_local_ops", r->portals_local_ops},
                         {"portals_posted", r->posted_served},
                         {"messages_sent", r->messages_sent},
                         {"bytes_sent", r->bytes_sent},
                         {"compute_time", std::max(0.0, r->compute_time - r->mpi_library_time)},
                         {"mpi_library_time", r->mpi_library_time},
                         {"portals_time", r->portals_time},
                         {"sleep_time", r->sleep_time},
                         {"peak_rss", r->peak_resident_bytes},
                         {"involuntary_switches", r->involuntary_switches},
                         {"host_decisions", decisions_json(r->host_decisions)},
                         {"finished", r->phase == RankPhase::Finished}});
    }
    nlohmann::json summary = {{"version", 1},
            {"status", ctx.outcome.status},
            {"message", ctx.outcome.message},
            {"world_size", ctx.registry.size()},
            {"platform", platform_json},
            {"makespan", makespan},
            {"portals_ops", operations},
            {"portals_local_ops", local},
            {"portals_posted", posted},
            {"bytes_moved", network.bytes_moved},
            {"retransmissions", network.retransmissions},
            {"undeliverable", network.undeliverable},
            {"payloads_copied_once", delivery_stats().orders},
            {"payload_copy_fallbacks", delivery_stats().fallbacks},
            {"server_peak_rss", server_peak_resident_bytes()},
            {"host_load", {{"at_start", load_json(ctx.host_load_at_start)}, {"at_end", load_json(host_load())}}},
            {"largest_rank_peak_rss", largest_rank_peak},
            {"host_decisions", decisions_json(decisions)},
            {"ranks", ranks}};
    if (ctx.outcome.abort_status >= 0) summary["abort_status"] = ctx.outcome.abort_status;
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
