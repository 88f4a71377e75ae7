#include "nic/network_models.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <simgrid/s4u.hpp>

#include "nic/message_hooks.hpp"

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

NetworkModels* g_models = nullptr;  // the run's, for the clock's callback

}  // namespace

NetworkModels::NetworkModels(const PlatformSpec& spec)
    : pcontrol_mode_(spec.network_switch == "pcontrol"),
      switching_(spec.switches_models()),
      schedule_(spec.network_phases)
{
    spans_.push_back({schedule_.front().model, 0.0,
                      pcontrol_mode_ ? "network.model, until every rank calls MPI_Pcontrol" : "start"});
    if (switching_) g_message_hooks.model_changed(spans_.back().model, 0.0);
    g_models = this;
    // A date of the schedule is noted as the clock passes it, before anything happens at
    // the new date (the timeline's Paje writer needs its events in the order of time).
    static bool connected = false;
    if (schedule_.size() > 1 && !connected) {
        connected = true;
        sg4::Engine::on_time_advance_cb([](double) {
            if (g_models) g_models->reach(sg4::Engine::get_clock());
        });
    }
}

NetworkModels::~NetworkModels()
{
    if (g_models == this) g_models = nullptr;
}

netmodel::Model NetworkModels::current()
{
    reach(sg4::Engine::get_clock());
    return spans_.back().model;
}

// No timer for the schedule's dates (one would keep the simulation going past the
// program's end): a phase is recorded from its own date as the clock or a call passes it,
// and one after the run's end never shows.
void NetworkModels::reach(double now)
{
    while (next_phase_ < schedule_.size() && schedule_[next_phase_].from <= now) {
        const netmodel::Phase& phase = schedule_[next_phase_++];
        change(phase.model, phase.from, fmt::format("network.model's date {} s", phase.from));
    }
}

void NetworkModels::change(netmodel::Model model, double at, std::string cause)
{
    if (model == spans_.back().model) return;
    spans_.push_back({model, at, std::move(cause)});
    g_message_hooks.model_changed(model, at);
}

void NetworkModels::pcontrol(uint32_t rank, uint32_t ranks, int level)
{
    ++pcontrol_calls_;
    if (calls_of_rank_.size() < ranks) calls_of_rank_.resize(ranks, 0);
    uint32_t call = ++calls_of_rank_.at(rank);  // this rank's k-th call
    if (call == rounds_done_ + 1) round_levels_.push_back(level);
    // A round ends when the last rank makes its call of that round.
    if (std::any_of(calls_of_rank_.begin(), calls_of_rank_.end(), [&](uint32_t c) { return c <= rounds_done_; }))
        return;
    ++rounds_done_;
    bool agree = std::all_of(round_levels_.begin(), round_levels_.end(),
                             [&](int l) { return (l > 0) == (round_levels_.back() > 0); });
    if (!agree)
        notes_.push_back(fmt::format("MPI_Pcontrol round {}: the ranks asked for different models; the last "
                                     "call's level ({}) was taken",
                                     rounds_done_, round_levels_.back()));
    netmodel::Model model = round_levels_.back() > 0 ? netmodel::Model::Detailed : netmodel::Model::Flow;
    round_levels_.clear();
    if (pcontrol_mode_)
        change(model, sg4::Engine::get_clock(),
               fmt::format("MPI_Pcontrol({}) on every rank (round {})", level, rounds_done_));
}

nlohmann::json NetworkModels::summary(double end)
{
    reach(end);
    nlohmann::json spans = nlohmann::json::array();
    double detailed = 0, flow = 0;
    for (size_t i = 0; i < spans_.size(); ++i) {
        double to = i + 1 < spans_.size() ? spans_[i + 1].from : std::max(end, spans_[i].from);
        (spans_[i].model == netmodel::Model::Flow ? flow : detailed) += to - spans_[i].from;
        spans.push_back({{"model", netmodel::name(spans_[i].model)},
                         {"from", spans_[i].from},
                         {"to", to},
                         {"cause", spans_[i].cause}});
    }
    nlohmann::json notes = notes_;
    uint32_t ranks_done = 0;
    for (uint32_t c : calls_of_rank_) ranks_done += c > rounds_done_;
    if (pcontrol_mode_ && ranks_done > 0)
        notes.push_back(fmt::format("MPI_Pcontrol round {} was called by {} of {} ranks: no switch at it, the run "
                                    "went on in the model it had",
                                    rounds_done_ + 1, ranks_done, calls_of_rank_.size()));
    if (pcontrol_calls_ > 0 && !pcontrol_mode_)
        notes.push_back(fmt::format("the program called MPI_Pcontrol {} times; network.switch is dates, so they "
                                    "switched nothing (--network-model-switch pcontrol makes them switch)",
                                    pcontrol_calls_));
    return {{"spans", spans},
            {"time_detailed", detailed},
            {"time_flow", flow},
            {"pcontrol_calls", pcontrol_calls_},
            {"notes", notes}};
}

}  // namespace s4bxi::sim
