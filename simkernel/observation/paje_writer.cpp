// The timeline in Paje, the trace format of SimGrid and SMPI (read by pajeng's pj_dump and
// by ViTE). A Paje file must be in the order of time, and a rank reports its computation
// when it makes its next request, so events wait in a queue, ordered by date, until no
// rank can report anything earlier (the watermark timeline.cpp gives); the queue holds
// what happened since, not the run.
#include <cstdio>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "observation/timeline_sinks.hpp"

namespace s4bxi::sim::observe {

namespace {

constexpr const char* kHeader = R"(%EventDef PajeDefineContainerType 0
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineVariableType 1
%       Alias string
%       Type string
%       Name string
%       Color color
%EndEventDef
%EventDef PajeDefineStateType 2
%       Alias string
%       Type string
%       Name string
%EndEventDef
%EventDef PajeDefineLinkType 4
%       Alias string
%       Type string
%       StartContainerType string
%       EndContainerType string
%       Name string
%EndEventDef
%EventDef PajeCreateContainer 6
%       Time date
%       Alias string
%       Type string
%       Container string
%       Name string
%EndEventDef
%EventDef PajeDestroyContainer 7
%       Time date
%       Type string
%       Name string
%EndEventDef
%EventDef PajeSetVariable 8
%       Time date
%       Type string
%       Container string
%       Value double
%EndEventDef
%EventDef PajePushState 12
%       Time date
%       Type string
%       Container string
%       Value string
%EndEventDef
%EventDef PajePopState 13
%       Time date
%       Type string
%       Container string
%EndEventDef
%EventDef PajeStartLink 15
%       Time date
%       Type string
%       Container string
%       Value string
%       StartContainer string
%       Key string
%EndEventDef
%EventDef PajeEndLink 16
%       Time date
%       Type string
%       Container string
%       Value string
%       EndContainer string
%       Key string
%EndEventDef
0 RUN 0 "run"
0 RANK RUN "rank"
0 NIC RUN "NIC"
0 LINK RUN "link"
2 STATE RANK "state"
1 INFLIGHT NIC "bytes in flight" "1 0 0"
1 UTILISATION LINK "utilisation" "0 0 1"
1 NETWORK_MODEL RUN "network model: 1 detailed, 0 flow" "0 1 0"
4 MSG RUN RANK RANK "message"
6 0 run RUN 0 "run"
)";

struct Pending {
    double time;
    uint64_t seq;
    std::string line;
    bool operator>(const Pending& other) const { return time != other.time ? time > other.time : seq > other.seq; }
};

class PajeSink final : public Sink {
public:
    explicit PajeSink(const std::string& path) : file_(std::fopen(path.c_str(), "w"))
    {
        if (!file_) throw std::runtime_error(fmt::format("cannot write the Paje trace {}", path));
        std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
        std::fputs(kHeader, file_);
    }
    ~PajeSink() override
    {
        if (file_) close(0);
    }

    void track(int rank, const std::string& name) override
    {
        ranks_.insert(rank);
        queue(0.0, fmt::format("6 0 rank{} RANK run \"{}\"", rank, name));
    }
    void begin(int rank, double t, const Slice& s) override
    {
        queue(t, fmt::format("12 {:.9f} STATE rank{} {}", t, rank, s.name));
    }
    void end(int rank, double t, const Slice&) override { queue(t, fmt::format("13 {:.9f} STATE rank{}", t, rank)); }
    void flow_start(uint64_t id, int rank, double t) override
    {
        queue(t, fmt::format("15 {:.9f} MSG run message rank{} m{}", t, rank, id));
    }
    void flow_end(uint64_t id, int rank, double t, const char*) override
    {
        queue(t, fmt::format("16 {:.9f} MSG run message rank{} m{}", t, rank, id));
    }
    void counter(uint32_t node, double t, double bytes) override
    {
        if (nics_.insert(node).second) queue(t, fmt::format("6 {:.9f} nic{} NIC run \"node{} NIC\"", t, node, node));
        queue(t, fmt::format("8 {:.9f} INFLIGHT nic{} {}", t, node, bytes));
    }
    void network_model(double t, int detailed) override
    {
        queue(t, fmt::format("8 {:.9f} NETWORK_MODEL run {}", t, detailed));
    }
    void link_load(size_t index, const std::string& name, double t, double utilisation) override
    {
        if (links_.insert(index).second) queue(t, fmt::format("6 {:.9f} link{} LINK run \"{}\"", t, index, name));
        queue(t, fmt::format("8 {:.9f} UTILISATION link{} {}", t, index, utilisation));
    }
    void watermark(double t) override
    {
        while (!pending_.empty() && pending_.top().time <= t) write_top();
    }
    void close(double end) override
    {
        if (!file_) return;
        while (!pending_.empty()) {
            end = std::max(end, pending_.top().time);
            write_top();
        }
        for (int rank : ranks_) fmt::print(file_, "7 {:.9f} RANK rank{}\n", end, rank);
        for (uint32_t node : nics_) fmt::print(file_, "7 {:.9f} NIC nic{}\n", end, node);
        for (size_t link : links_) fmt::print(file_, "7 {:.9f} LINK link{}\n", end, link);
        fmt::print(file_, "7 {:.9f} RUN run\n", end);
        std::fclose(file_);
        file_ = nullptr;
    }

private:
    void queue(double t, std::string line) { pending_.push({t, seq_++, std::move(line)}); }
    void write_top()
    {
        std::fputs(pending_.top().line.c_str(), file_);
        std::fputc('\n', file_);
        pending_.pop();
    }

    std::FILE* file_;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<Pending>> pending_;
    uint64_t seq_ = 0;
    std::set<int> ranks_;
    std::set<uint32_t> nics_;
    std::set<size_t> links_;
};

}  // namespace

std::unique_ptr<Sink> make_paje_sink(const std::string& path)
{
    return std::make_unique<PajeSink>(path);
}

}  // namespace s4bxi::sim::observe
