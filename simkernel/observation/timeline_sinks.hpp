// The writers of a timeline (timeline.cpp feeds them): Chrome trace-event JSON
// (timeline_json.cpp) and Paje (paje_writer.cpp). Each rank's events come in the order of
// simulated time; flows and counters come at the simulation's current time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace s4bxi::sim::observe {

struct Slice {
    const char* name = "";      // a static string: a call, an MPI function, "compute"
    const char* category = "";  // compute, mpi, portals, wait, sleep
    double begin = 0.0;         // simulated seconds
    int64_t size = -1;          // bytes (-1: not a data call)
    int peer = -1;              // the other rank (-1: none or unknown)
    bool has_match_bits = false;
    uint64_t match_bits = 0;
    int rc = 0;                 // the call's return code (Portals)
};

class Sink {
public:
    virtual ~Sink() = default;
    virtual void track(int rank, const std::string& name) = 0;
    virtual void begin(int rank, double t, const Slice& slice) = 0;
    virtual void end(int rank, double t, const Slice& slice) = 0;
    virtual void flow_start(uint64_t id, int rank, double t) = 0;
    // The message reached `rank`'s NIC at `t`: an instant `what` there, the flow's end.
    virtual void flow_end(uint64_t id, int rank, double t, const char* what) = 0;
    virtual void counter(uint32_t node, double t, double bytes_in_flight) = 0;
    // Link number `index` (named `name`) carries `utilisation` (its load over its
    // bandwidth, 0 to 1) from `t` on.
    virtual void link_load(size_t index, const std::string& name, double t, double utilisation) = 0;
    // The network model runs from `t` on: 1 detailed, 0 flow (docs/network-models.md,
    // "Switching network models").
    virtual void network_model(double t, int detailed) = 0;
    // No rank will report anything earlier than `t` any more.
    virtual void watermark(double) {}
    virtual void close(double end) = 0;
};

// Both throw std::runtime_error when the file cannot be written.
std::unique_ptr<Sink> make_json_sink(const std::string& path);
std::unique_ptr<Sink> make_paje_sink(const std::string& path);

}  // namespace s4bxi::sim::observe
