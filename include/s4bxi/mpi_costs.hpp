// What the MPI library's own code costs per call under the measured CPU model (docs/time.md
// "The MPI library's code"): a per-call cost by kind of call, plus a per-byte cost for the
// reductions the library computes, calibrated on this host with the same library on a warm
// core (s4bxi-launch --calibrate) as SMPI models its send and receive overheads. Charged
// instead of the CPU time the call takes in the rank, which counts the cold caches and
// branch predictors the server and the other ranks left behind, not the library's work.
//
// Shared by the launcher, which calibrates the costs and hands them to the ranks, and the
// preloaded library (libinterpose/mpi/mpi_profile.cpp), which charges them. Pure logic.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

namespace s4bxi::mpicost {

// How a call is charged.
enum class CostKind {
    Measured,    // its CPU time, as any compute (start-up, communicator creation)
    Send,        // a send, a one-sided put or get
    Receive,     // a receive posted or matched
    Poll,        // a test, a wait, a probe: the library's progress, once
    Collective,  // one call of the collective, plus a send and a receive per round
    SendReceive, // a send and a receive
};

struct MpiCosts {
    double send_ns = 0;
    double receive_ns = 0;
    double poll_ns = 0;
    double collective_ns = 0;
    double reduce_ns_per_byte = 0;  // an MPI_Op applied to the data: reductions, accumulates

    // The charge (ns of CPU time) of a call of `kind` over `bytes`, in a communicator of
    // `ranks` processes; `reduces`: the call applies an operation to its data.
    double charge(CostKind kind, uint64_t bytes, int ranks, bool reduces) const
    {
        double per_byte = reduces ? reduce_ns_per_byte * static_cast<double>(bytes) : 0.0;
        switch (kind) {
        case CostKind::Measured: return 0.0;
        case CostKind::Send: return send_ns + per_byte;
        case CostKind::Receive: return receive_ns;
        case CostKind::Poll: return poll_ns;
        case CostKind::SendReceive: return send_ns + receive_ns;
        case CostKind::Collective: {
            // A tree or a recursive doubling: a send and a receive per round, log2(ranks)
            // rounds, and the operation on the data once per round.
            double rounds = ranks > 1 ? std::ceil(std::log2(static_cast<double>(ranks))) : 0.0;
            return collective_ns + rounds * (send_ns + receive_ns + per_byte);
        }
        }
        return 0.0;
    }
};

// The kind of call and whether it applies an operation to its data, by name.
struct CallCost {
    CostKind kind;
    bool reduces;
};

constexpr CallCost cost_of(std::string_view name)
{
    using K = CostKind;
    constexpr std::string_view measured[] = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Comm_split",
                                             "MPI_Comm_dup"};
    for (auto m : measured)
        if (name == m) return {K::Measured, false};
    constexpr std::string_view reducing[] = {"MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter",
                                             "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan",
                                             "MPI_Iallreduce"};
    for (auto r : reducing)
        if (name == r) return {K::Collective, true};
    if (name == "MPI_Accumulate") return {K::Send, true};
    if (name == "MPI_Sendrecv" || name == "MPI_Sendrecv_replace") return {K::SendReceive, false};
    if (name == "MPI_Recv" || name == "MPI_Irecv") return {K::Receive, false};
    if (name.starts_with("MPI_Wait") || name.starts_with("MPI_Test") || name == "MPI_Probe" ||
        name == "MPI_Iprobe" || name == "MPI_Win_lock" || name == "MPI_Win_unlock" || name == "MPI_Win_flush")
        return {K::Poll, false};
    constexpr std::string_view sending[] = {"MPI_Send", "MPI_Isend", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend",
                                            "MPI_Put", "MPI_Get"};
    for (auto m : sending)
        if (name == m) return {K::Send, false};
    return {K::Collective, false};  // barriers, broadcasts, gathers, scatters, all-to-alls, fences
}

// The costs as the launcher hands them to the ranks (S4BXI_MPI_COST_TABLE; the user, --mpi-costs): comma-separated
// `key=value` pairs, keys send, receive, poll, collective (ns per call) and
// reduce_per_byte (ns per byte). Returns nothing, and names the culprit in `error`, when
// the text is malformed; keys left out are 0.
inline std::optional<MpiCosts> parse_costs(std::string_view text, std::string_view* error = nullptr)
{
    MpiCosts costs;
    while (!text.empty()) {
        size_t comma = text.find(',');
        std::string_view pair = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        size_t equal = pair.find('=');
        if (equal == std::string_view::npos) {
            if (error) *error = pair;
            return std::nullopt;
        }
        std::string_view key = pair.substr(0, equal);
        std::string_view value = pair.substr(equal + 1);
        char buffer[32];
        if (value.empty() || value.size() >= sizeof buffer) {
            if (error) *error = pair;
            return std::nullopt;
        }
        std::memcpy(buffer, value.data(), value.size());
        buffer[value.size()] = '\0';
        char* end = nullptr;
        double number = std::strtod(buffer, &end);
        if (*end != '\0' || !(number >= 0) || !std::isfinite(number)) {
            if (error) *error = pair;
            return std::nullopt;
        }
        if (key == "send") costs.send_ns = number;
        else if (key == "receive") costs.receive_ns = number;
        else if (key == "poll") costs.poll_ns = number;
        else if (key == "collective") costs.collective_ns = number;
        else if (key == "reduce_per_byte") costs.reduce_ns_per_byte = number;
        else {
            if (error) *error = pair;
            return std::nullopt;
        }
    }
    return costs;
}

}  // namespace s4bxi::mpicost
