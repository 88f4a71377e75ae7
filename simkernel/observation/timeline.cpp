// The timeline's core (timeline.hpp): per rank, the slices open right now, clipped to the
// filter's window and handed to the writers; the messages in flight, for flows and the
// NICs' counters; the links' utilisation; and the counts the summary adds (observation/run_statistics.cpp).
#include "observation/timeline.hpp"

#include <algorithm>
#include <memory>
#include <unordered_map>

#include <simgrid/s4u.hpp>

#include "nic/nic_model.hpp"
#include "observation/run_statistics.hpp"
#include "observation/timeline_sinks.hpp"
#include "run/context.hpp"
#include "s4bxi/call_records.hpp"

namespace s4bxi::sim::observe {

namespace {

namespace sg4 = simgrid::s4u;

struct Open {
    Slice slice;
    bool forwarded = false;  // handed to the writers (inside the window)
};

struct Track {
    bool known = false;
    bool selected = false;
    std::vector<Open> stack;
    double low_mark = 0.0;  // the rank reports nothing earlier than this any more
    bool finished = false;
};

struct InFlight {
    uint64_t id;
    uint32_t nid;
    uint64_t bytes;
    int target;
    bool flow;  // a flow was started in the writers
};

// A link of the platform and the utilisation last written for it.
struct LinkLoad {
    sg4::Link* link;
    double written = 0.0;
};

struct State {
    Options options;
    std::vector<std::unique_ptr<Sink>> sinks;
    std::vector<Track> tracks;
    std::unordered_map<const Transfer*, InFlight> in_flight;
    std::unordered_map<uint32_t, double> nic_bytes;
    uint64_t next_flow = 1;
    bool paje = false;
    double last_watermark = 0.0;
    std::vector<LinkLoad> links;  // listed at the first sample
    bool links_listed = false;
};

State& state()
{
    static State s;
    return s;
}

bool g_enabled = false;

Track& track(int rank)
{
    auto& tracks = state().tracks;
    if (rank >= static_cast<int>(tracks.size())) tracks.resize(static_cast<size_t>(rank) + 1);
    return tracks[static_cast<size_t>(rank)];
}

bool in_window(double t)
{
    return t >= state().options.window_start && t <= state().options.window_end;
}

// Hands to the writers the open slices of `rank` not handed yet, once `t` is in the window
// (they begin at the window's start at the earliest).
void forward_pending(Track& tr, int rank, double t)
{
    const Options& o = state().options;
    if (t < o.window_start) return;
    for (Open& open : tr.stack) {
        if (open.forwarded || open.slice.begin > o.window_end) continue;
        open.forwarded = true;
        open.slice.begin = std::max(open.slice.begin, o.window_start);
        for (auto& sink : state().sinks) sink->begin(rank, open.slice.begin, open.slice);
    }
}

void open_slice(Track& tr, int rank, const Slice& slice)
{
    tr.stack.push_back({slice, false});
    forward_pending(tr, rank, slice.begin);
}

void close_slice(Track& tr, int rank, double t)
{
    if (tr.stack.empty()) return;
    forward_pending(tr, rank, t);
    Open open = tr.stack.back();
    tr.stack.pop_back();
    if (!open.forwarded) return;
    t = std::min(std::max(t, open.slice.begin), state().options.window_end);
    for (auto& sink : state().sinks) sink->end(rank, t, open.slice);
}

void compute_slice(Track& tr, int rank, double from, double to)
{
    Slice s;
    s.name = "compute";
    s.category = "compute";
    s.begin = from;
    open_slice(tr, rank, s);
    close_slice(tr, rank, to);
}

void advance_watermark()
{
    State& s = state();
    if (!s.paje) return;
    double mark = sg4::Engine::get_clock();
    for (const Track& tr : s.tracks)
        if (tr.known && !tr.finished) mark = std::min(mark, tr.low_mark);
    if (mark <= s.last_watermark) return;
    s.last_watermark = mark;
    for (auto& sink : s.sinks) sink->watermark(mark);
}

const char* op_name(uint32_t op)
{
    static const char* const names[] = {
        "PtlInit", "PtlFini", "PtlNIInit", "PtlNIFini", "PtlPTAlloc", "PtlPTFree", "PtlMDBind", "PtlMDRelease",
        "PtlMEAppend", "PtlMEUnlink", "PtlEQAlloc", "PtlEQFree", "PtlEQGet", "PtlEQWait", "PtlEQPoll", "PtlCTAlloc",
        "PtlCTFree", "PtlCTGet", "PtlCTWait", "PtlCTPoll", "PtlCTSet", "PtlCTInc", "PtlPut", "PtlGet", "PtlAtomic",
        "PtlPTEnable", "PtlPTDisable", "PtlGetId", "PtlGetPhysId", "PtlGetUid", "PtlFetchAtomic", "PtlSwap",
        "PtlMESearch", "PtlTriggered", "PtlCTCancelTriggered", "PtlSetMap", "PtlGetMap", "PtlNIStatus",
        "PtlNIHandle"};
    constexpr uint32_t first = static_cast<uint32_t>(wire::Op::PtlInit);
    static_assert(sizeof names / sizeof names[0] == static_cast<uint32_t>(wire::Op::CallRecords) - first);
    if (op == static_cast<uint32_t>(wire::Op::Sleep)) return "sleep";
    if (op == static_cast<uint32_t>(wire::Op::PmiBarrier)) return "PMI_Barrier";
    if (op == static_cast<uint32_t>(wire::Op::PmiKvsPut)) return "PMI_KVS_Put";
    if (op == static_cast<uint32_t>(wire::Op::PmiKvsGet)) return "PMI_KVS_Get";
    if (op < first || op >= static_cast<uint32_t>(wire::Op::CallRecords)) return nullptr;  // not shown
    return names[op - first];
}

// The slice of a request, with what its arguments say about the data it moves.
Slice request_slice(const wire::Request& request, const char* name, double now)
{
    Slice s;
    s.name = name;
    s.category = blocking_wait(request.op) ? "wait" : request.op == static_cast<uint32_t>(wire::Op::Sleep) ? "sleep"
                                                                                                         : "portals";
    s.begin = now;
    auto data = [&s](const wire::DataArgs& a) {
        s.size = static_cast<int64_t>(a.length);
        s.has_match_bits = true;
        s.match_bits = a.match_bits;
    };
    switch (static_cast<wire::Op>(request.op)) {
    case wire::Op::PtlPut:
    case wire::Op::PtlGet:
    case wire::Op::PtlAtomic: data(wire::args_as<wire::DataArgs>(request.args)); break;
    case wire::Op::PtlFetchAtomic:
    case wire::Op::PtlSwap: data(wire::args_as<wire::FetchArgs>(request.args).data); break;
    case wire::Op::PtlTriggered: data(wire::args_as<wire::TriggeredArgs>(request.args).fetch.data); break;
    case wire::Op::PtlMEAppend:
    case wire::Op::PtlMESearch: {
        const auto& a = wire::args_as<wire::MEAppendArgs>(request.args);
        s.size = static_cast<int64_t>(a.length);
        s.has_match_bits = !a.is_le;
        s.match_bits = a.match_bits;
        break;
    }
    default: break;
    }
    return s;
}

// The rank's MPI records since the last request, between the computation's two ends.
void drain_records(RankRecord& r, Track* tr, double compute_start, double compute_end)
{
    wire::CallRecordRing& ring = wire::call_records_of(*r.slot.object);
    uint64_t head = ring.head.load(std::memory_order_acquire);
    uint64_t tail = ring.tail.load(std::memory_order_relaxed);
    double cursor = compute_start;
    for (; tail != head; ++tail) {
        const wire::CallRecord record = ring.records[tail % wire::kCallRecords];
        auto kind = static_cast<wire::CallRecordKind>(record.kind);
        if (kind == wire::CallRecordKind::Total) {
            statistics().mpi_total(r.rank, record.function, record.count, record.time, record.bytes);
            continue;
        }
        if (!tr || record.function >= wire::kMpiFunctionCount) continue;
        double t = std::clamp(record.time, cursor, std::max(cursor, compute_end));
        if (t > cursor) compute_slice(*tr, r.rank, cursor, t);
        cursor = t;
        if (kind == wire::CallRecordKind::Begin) {
            Slice s;
            s.name = wire::kMpiFunctions[record.function];
            s.category = "mpi";
            s.begin = t;
            if (record.bytes) s.size = static_cast<int64_t>(record.bytes);
            s.peer = record.peer;
            open_slice(*tr, r.rank, s);
        } else {
            while (!tr->stack.empty() && std::string_view(tr->stack.back().slice.category) != "mpi")
                close_slice(*tr, r.rank, t);
            close_slice(*tr, r.rank, t);
        }
    }
    ring.tail.store(head, std::memory_order_release);
    if (tr && compute_end > cursor) compute_slice(*tr, r.rank, cursor, compute_end);
}

const char* landing_name(MessageType type)
{
    switch (type) {
    case MessageType::Put: return "PUT arrives";
    case MessageType::Get: return "GET arrives";
    case MessageType::Atomic: return "ATOMIC arrives";
    case MessageType::FetchAtomic: return "FETCH_ATOMIC arrives";
    default: return "message arrives";
    }
}

void nic_counter(uint32_t nid, double delta)
{
    double& bytes = state().nic_bytes[nid];
    bytes = std::max(0.0, bytes + delta);
    double now = sg4::Engine::get_clock();
    if (!in_window(now)) return;
    for (auto& sink : state().sinks) sink->counter(nid, now, bytes);
}

// The engine advanced the clock by `elapsed`: the links carried, over the step that just
// ended, the rates the last sharing gave (SimGrid's Link::get_usage, in bytes per second,
// still holds them: the flows that ended at this step are freed later). Each link whose
// utilisation changed gets a sample at the step's start. Only connected when a timeline or
// a Paje file is written.
void sample_links(double elapsed)
{
    if (!g_enabled) return;
    State& s = state();
    if (!s.links_listed) {
        for (sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) s.links.push_back({link});
        std::sort(s.links.begin(), s.links.end(),
                  [](const LinkLoad& a, const LinkLoad& b) { return a.link->get_name() < b.link->get_name(); });
        s.links_listed = true;
    }
    double now = sg4::Engine::get_clock();
    const Options& o = s.options;
    if (now < o.window_start) return;
    double t = std::max(now - elapsed, o.window_start);
    if (t > o.window_end) return;
    for (size_t i = 0; i < s.links.size(); ++i) {
        LinkLoad& l = s.links[i];
        double bandwidth = l.link->get_bandwidth();
        double utilisation = bandwidth > 0 ? l.link->get_usage() / bandwidth : 0.0;
        if (utilisation == l.written) continue;
        l.written = utilisation;
        for (auto& sink : s.sinks) sink->link_load(i, l.link->get_name(), t, utilisation);
    }
}

}  // namespace

bool blocking_wait(uint32_t op)
{
    switch (static_cast<wire::Op>(op)) {
    case wire::Op::PtlEQWait:
    case wire::Op::PtlEQPoll:
    case wire::Op::PtlCTWait:
    case wire::Op::PtlCTPoll:
    case wire::Op::PtlEQGet:  // a round trip is an empty poll, fast-forwarded
    case wire::Op::PtlCTGet:
    case wire::Op::PmiBarrier: return true;
    default: return false;
    }
}

void open(const Options& options)
{
    State& s = state();
    s.options = options;
    if (!options.timeline_file.empty()) s.sinks.push_back(make_json_sink(options.timeline_file));
    if (!options.paje_file.empty()) {
        s.sinks.push_back(make_paje_sink(options.paje_file));
        s.paje = true;
    }
    g_enabled = !s.sinks.empty();
    if (g_enabled) sg4::Engine::on_time_advance_cb(sample_links);
}

bool enabled()
{
    return g_enabled;
}

void close(double end)
{
    if (!g_enabled) return;
    State& s = state();
    for (size_t rank = 0; rank < s.tracks.size(); ++rank)
        while (!s.tracks[rank].stack.empty()) close_slice(s.tracks[rank], static_cast<int>(rank), end);
    for (auto& [transfer, flight] : s.in_flight)
        if (flight.flow)
            for (auto& sink : s.sinks) sink->flow_end(flight.id, flight.target, end, "never arrived");
    s.in_flight.clear();
    for (size_t i = 0; i < s.links.size(); ++i)
        if (s.links[i].written != 0.0 && end <= s.options.window_end)
            for (auto& sink : s.sinks) sink->link_load(i, s.links[i].link->get_name(), end, 0.0);
    for (auto& sink : s.sinks) sink->close(end);
    s.sinks.clear();
    g_enabled = false;
}

void network_model_changed(netmodel::Model model, double at)
{
    if (!g_enabled) return;
    for (auto& sink : state().sinks) sink->network_model(at, model == netmodel::Model::Detailed ? 1 : 0);
}

void rank_registered(RankRecord& r)
{
    wire::call_records_of(*r.slot.object).timeline.store(g_enabled ? 1 : 0, std::memory_order_release);
    if (!g_enabled) return;
    Track& tr = track(r.rank);
    tr.known = true;
    const auto& ranks = state().options.ranks;
    tr.selected = ranks.empty() || std::find(ranks.begin(), ranks.end(), r.rank) != ranks.end();
    if (!tr.selected) return;
    std::string name = "rank " + std::to_string(r.rank) + " (" + r.node_name + ")";
    for (auto& sink : state().sinks) sink->track(r.rank, name);
}

void request_dispatched(RankRecord& r, const wire::Request& request, double compute_start, double compute_end)
{
    double now = sg4::Engine::get_clock();
    statistics().dispatched(r.rank, now);
    Track* tr = g_enabled && track(r.rank).selected ? &track(r.rank) : nullptr;
    drain_records(r, tr, compute_start, compute_end);
    if (!g_enabled) return;
    if (tr) {
        if (const char* name = op_name(request.op)) open_slice(*tr, r.rank, request_slice(request, name, now));
    }
    track(r.rank).low_mark = now;
    advance_watermark();
}

void request_served(RankRecord& r, const wire::Request& request, int rc, bool finished)
{
    double now = sg4::Engine::get_clock();
    statistics().served(r.rank, request.op, now);
    if (!g_enabled) return;
    Track& tr = track(r.rank);
    if (tr.selected) {
        if (finished) {
            while (!tr.stack.empty()) close_slice(tr, r.rank, now);
        } else if (op_name(request.op) && !tr.stack.empty()) {
            tr.stack.back().slice.rc = rc;
            close_slice(tr, r.rank, now);
        }
    }
    tr.low_mark = now;
    tr.finished = finished;
    advance_watermark();
}

void message_issued(const RankRecord& r, const Transfer& t)
{
    int target = statistics().rank_of(t.target_nid, t.target_pid);
    uint64_t payload = t.kind == MessageType::Get ? 0 : t.length;
    statistics().message(r.rank, target, payload);
    if (!g_enabled) return;
    State& s = state();
    double now = sg4::Engine::get_clock();
    Track& tr = track(r.rank);
    if (tr.selected && !tr.stack.empty()) tr.stack.back().slice.peer = target;
    bool flow = tr.selected && target >= 0 && track(target).selected && in_window(now);
    InFlight flight{s.next_flow++, r.nid, payload, target, flow};
    if (flow) {
        forward_pending(tr, r.rank, now);
        for (auto& sink : s.sinks) sink->flow_start(flight.id, r.rank, now);
    }
    s.in_flight[&t] = flight;
    if (payload) nic_counter(r.nid, static_cast<double>(payload));
}

void message_landed(const Message& message)
{
    if (!g_enabled) return;
    switch (message.type) {
    case MessageType::Put:
    case MessageType::Get:
    case MessageType::Atomic:
    case MessageType::FetchAtomic: break;
    default: return;
    }
    State& s = state();
    auto it = s.in_flight.find(message.transfer.get());
    if (it == s.in_flight.end()) return;  // a retransmission that landed again
    InFlight flight = it->second;
    s.in_flight.erase(it);
    if (flight.bytes) nic_counter(flight.nid, -static_cast<double>(flight.bytes));
    if (!flight.flow) return;
    double now = sg4::Engine::get_clock();
    forward_pending(track(flight.target), flight.target, now);
    for (auto& sink : s.sinks) sink->flow_end(flight.id, flight.target, now, landing_name(message.type));
}

}  // namespace s4bxi::sim::observe
