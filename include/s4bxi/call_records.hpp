// The rank's record of its MPI calls, in the memory it shares with the server right after
// its mirror: the preloaded library's MPI wrappers (libinterpose/mpi/) write, the server
// (simkernel/observation/) reads. Part of the contract of wire.hpp: bump wire::kVersion on
// any change.
//
// No request of its own: the server drains the ring whenever it serves one of the rank's
// requests, so an MPI call costs the rank two readings of its clock and, only while a
// timeline is written, two records. The rank asks the server to drain it
// (wire::Op::CallRecords) only when the ring is full, and at its end for its totals.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "s4bxi/mirror.hpp"

namespace s4bxi::wire {

enum class CallRecordKind : uint32_t {
    Begin = 1,  // an MPI call began at `time`; `bytes` and `peer` describe it
    End = 2,    // the innermost call begun ended at `time`
    Total = 3,  // the rank's totals of `function`: `count` calls, `time` seconds, `bytes`
};

struct CallRecord {
    uint32_t kind;      // CallRecordKind
    uint32_t function;  // index in kMpiFunctions
    int32_t peer;       // the peer's rank in the call's communicator; -1: none (a collective)
    uint32_t count;     // Total: calls
    double time;        // simulated seconds (Begin, End), or the time spent (Total)
    uint64_t bytes;     // payload bytes the call sends (or receives, for a receive)
};

inline constexpr uint32_t kCallRecords = 1632;

struct alignas(64) CallRecordRing {
    // Written by the server at registration: 1 while a timeline is written, which wants
    // every call (Begin and End records); 0: the rank keeps totals only.
    std::atomic<uint32_t> timeline;
    uint32_t reserved;
    std::atomic<uint64_t> head;  // records written (by the rank)
    std::atomic<uint64_t> tail;  // records read (by the server)
    CallRecord records[kCallRecords];
};
static_assert(std::is_standard_layout_v<CallRecordRing>);

inline constexpr size_t kCallRecordsOffset = kChannelBytes;
inline constexpr size_t kChannelWithRecordsBytes =
    kCallRecordsOffset + ((sizeof(CallRecordRing) + 4095) / 4096) * 4096;

inline CallRecordRing& call_records_of(Slot& slot)
{
    return *reinterpret_cast<CallRecordRing*>(reinterpret_cast<char*>(&slot) + kCallRecordsOffset);
}

// The MPI functions the library records, by index. Never reorder: the index crosses the
// wire; add new names at the end.
inline constexpr const char* kMpiFunctions[] = {
    "MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
    "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Wait", "MPI_Waitall",
    "MPI_Waitany", "MPI_Waitsome", "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Probe",
    "MPI_Iprobe", "MPI_Barrier", "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Gather", "MPI_Gatherv",
    "MPI_Scatter", "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall", "MPI_Alltoallv",
    "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan", "MPI_Ibarrier", "MPI_Ibcast",
    "MPI_Iallreduce", "MPI_Put", "MPI_Get", "MPI_Accumulate", "MPI_Win_fence", "MPI_Win_lock", "MPI_Win_unlock",
    "MPI_Win_flush", "MPI_Comm_split", "MPI_Comm_dup",
};
inline constexpr uint32_t kMpiFunctionCount = sizeof kMpiFunctions / sizeof kMpiFunctions[0];

}  // namespace s4bxi::wire
