// The timeline as Chrome trace-event JSON (the format of Perfetto, chrome://tracing and
// speedscope), written as it goes: a slice is written when it ends, nothing is kept.
// Timestamps in simulated microseconds. Process 1 holds one thread per rank; process 2
// the NICs' counters; process 3 the links' utilisation.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <fmt/format.h>

#include "observation/timeline_sinks.hpp"

namespace s4bxi::sim::observe {

namespace {

constexpr int kRanksPid = 1;
constexpr int kNicsPid = 2;
constexpr int kLinksPid = 3;

class JsonSink final : public Sink {
public:
    explicit JsonSink(const std::string& path) : file_(std::fopen(path.c_str(), "w"))
    {
        if (!file_) throw std::runtime_error(fmt::format("cannot write the timeline {}", path));
        std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
        std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
        event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"ranks"}}}})", kRanksPid);
        event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"NICs"}}}})", kNicsPid);
        event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"links"}}}})", kLinksPid);
    }
    ~JsonSink() override
    {
        if (file_) close(0);
    }

    void track(int rank, const std::string& name) override
    {
        event(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}"}}}})", kRanksPid, rank, name);
        event(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", kRanksPid,
              rank, rank);
    }
    void begin(int, double, const Slice&) override {}
    void end(int rank, double t, const Slice& s) override
    {
        std::string args;
        if (s.size >= 0) args += fmt::format(R"("size":{},)", s.size);
        if (s.peer >= 0) args += fmt::format(R"("peer":{},)", s.peer);
        if (s.has_match_bits) args += fmt::format(R"("match_bits":"0x{:x}",)", s.match_bits);
        if (s.rc != 0) args += fmt::format(R"("rc":{},)", s.rc);
        if (!args.empty()) args.pop_back();
        // Both ends rounded the same way, so that the slices of a track nest in the file as
        // they do in the simulation (viewers pair each slice's begin and end on a stack).
        double begin = us(s.begin), end = us(t);
        event(R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
              s.name, s.category, kRanksPid, rank, begin, end - begin, args);
    }
    void flow_start(uint64_t id, int rank, double t) override
    {
        event(R"({{"ph":"s","name":"message","cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})", id, kRanksPid,
              rank, us(t));
    }
    void flow_end(uint64_t id, int rank, double t, const char* what) override
    {
        event(R"({{"ph":"i","name":"{}","cat":"message","s":"t","pid":{},"tid":{},"ts":{}}})", what, kRanksPid,
              rank, us(t));
        event(R"({{"ph":"f","bp":"e","name":"message","cat":"message","id":{},"pid":{},"tid":{},"ts":{}}})", id,
              kRanksPid, rank, us(t));
    }
    void counter(uint32_t node, double t, double bytes) override
    {
        event(R"({{"ph":"C","name":"node{} bytes in flight","pid":{},"tid":0,"ts":{},"args":{{"bytes":{}}}}})", node,
              kNicsPid, us(t), bytes);
    }
    void link_load(size_t, const std::string& name, double t, double utilisation) override
    {
        event(R"({{"ph":"C","name":"link {} utilisation","pid":{},"tid":0,"ts":{},"args":{{"utilisation":{}}}}})",
              name, kLinksPid, us(t), utilisation);
    }
    void network_model(double t, int detailed) override
    {
        event(R"x({{"ph":"C","name":"network model (1 detailed, 0 flow)","pid":{},"tid":0,"ts":{},"args":{{"detailed":{}}}}})x",
              kNicsPid, us(t), detailed);
    }
    void close(double) override
    {
        if (!file_) return;
        std::fputs("\n]}\n", file_);
        std::fclose(file_);
        file_ = nullptr;
    }

private:
    // Simulated seconds as microseconds, rounded to a multiple of 1/8192 us (0.12 ns): such
    // numbers are exact in binary, so a viewer's sums and differences of them (a slice's
    // begin plus its duration, a date minus the first one) are exact too, and slices that
    // nest or follow each other in the simulation still do in the viewer. Written in the
    // shortest form that reads back the same.
    static double us(double seconds) { return std::round(seconds * 1e6 * 8192) / 8192; }

    template <class... Args>
    void event(fmt::format_string<Args...> format, Args&&... args)
    {
        if (!first_) std::fputs(",\n", file_);
        first_ = false;
        fmt::print(file_, format, std::forward<Args>(args)...);
    }

    std::FILE* file_;
    bool first_ = true;
};

}  // namespace

std::unique_ptr<Sink> make_json_sink(const std::string& path)
{
    return std::make_unique<JsonSink>(path);
}

}  // namespace s4bxi::sim::observe
