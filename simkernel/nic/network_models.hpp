// Which network model runs when (docs/network-models.md, "Switching network models"): one model for
// the whole run, a schedule of models at simulated dates (network.model), or the
// program's MPI_Pcontrol calls (network.switch = pcontrol). A transfer takes the model in
// effect when its call is made and keeps it to its end, ACKs and responses included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platform/platform.hpp"
#include "s4bxi/network_schedule.hpp"

namespace s4bxi::sim {

class NetworkModels {
public:
    explicit NetworkModels(const PlatformSpec& spec);
    ~NetworkModels();
    NetworkModels(const NetworkModels&) = delete;
    NetworkModels& operator=(const NetworkModels&) = delete;

    // The model of a call made now.
    netmodel::Model current();
    bool switching() const { return switching_; }

    // Rank `rank` (0 .. ranks-1) called MPI_Pcontrol(level). Under network.switch =
    // pcontrol, once every rank has made its k-th call, the model changes at that instant:
    // flow for level 0, detailed for a level above 0. Nobody waits for it.
    void pcontrol(uint32_t rank, uint32_t ranks, int level);

    // "network_models" in the summary: each span of the run with its model and what
    // started it, the time under each model, and the MPI_Pcontrol calls that switched
    // nothing.
    nlohmann::json summary(double end);

private:
    struct Span {
        netmodel::Model model;
        double from;
        std::string cause;
    };
    void reach(double now);  // the schedule's phases up to `now`
    void change(netmodel::Model model, double at, std::string cause);

    bool pcontrol_mode_ = false;
    bool switching_ = false;
    std::vector<netmodel::Phase> schedule_;
    size_t next_phase_ = 1;        // the schedule's next phase still to begin
    std::vector<Span> spans_;      // what ran, from the start
    // MPI_Pcontrol rounds: how many calls each rank made, and the levels of the round
    // under way (the k-th call of each rank).
    std::vector<uint32_t> calls_of_rank_;
    uint32_t rounds_done_ = 0;
    std::vector<int> round_levels_;
    uint32_t pcontrol_calls_ = 0;
    std::vector<std::string> notes_;
};

}  // namespace s4bxi::sim
