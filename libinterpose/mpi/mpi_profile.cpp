// The MPI profiling interface (README.md): MPI_* wrappers that time each call in simulated
// time and call the next definition.
//
// No MPI header: handles travel as pointer-sized values (MPI_Comm, MPI_Datatype, MPI_Op,
// MPI_Win are pointers in Open MPI; an implementation with integer handles passes them in
// the same registers on x86-64), so the library builds and loads without any MPI installed.
#include "mpi/mpi_profile.hpp"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "time/virtual_clock.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/mpi_costs.hpp"

#define S4BXI_EXPORT __attribute__((visibility("default")))

namespace s4bxi::interpose::mpi {

using Handle = void*;
using Aint = intptr_t;

namespace {

struct Total {
    uint64_t count = 0;
    double time = 0.0;
    uint64_t bytes = 0;
};
Total g_totals[wire::kMpiFunctionCount];  // the simulated thread's calls only
bool g_any_call = false;
thread_local int t_depth = 0;

consteval uint32_t index_of(std::string_view name)
{
    for (uint32_t i = 0; i < wire::kMpiFunctionCount; ++i)
        if (name == wire::kMpiFunctions[i]) return i;
    return wire::kMpiFunctionCount;  // not a constant expression below: a compile error
}

// The first loaded object other than this library that defines `name`: an MPI library
// loaded with RTLD_LOCAL (Python's extension modules, mpi4py's libmpi) is in no global
// scope, but its callers bind to our definition all the same.
void* defined_in_loaded_objects(const char* name)
{
    struct Search {
        const char* name;
        void* found;
    } search{name, nullptr};
    Dl_info self{};
    dladdr(reinterpret_cast<void*>(&defined_in_loaded_objects), &self);
    static const char* self_name;
    self_name = self.dli_fname;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            if (!info->dlpi_name || !*info->dlpi_name || (self_name && strcmp(info->dlpi_name, self_name) == 0))
                return 0;
            void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
            if (!handle) return 0;
            s->found = dlsym(handle, s->name);
            dlclose(handle);
            Dl_info where{};
            if (s->found && dladdr(s->found, &where) && where.dli_fname && self_name &&
                strcmp(where.dli_fname, self_name) == 0)
                s->found = nullptr;  // ours, seen through that object's scope
            return s->found ? 1 : 0;
        },
        &search);
    return search.found;
}

void* resolve(const char* name)
{
    void* next = dlsym(RTLD_NEXT, name);
    char profiled[64];
    snprintf(profiled, sizeof profiled, "P%s", name);
    if (!next) next = dlsym(RTLD_DEFAULT, profiled);
    if (!next) next = defined_in_loaded_objects(profiled);
    if (!next) {
        char line[160];
        int n = snprintf(line, sizeof line, "s4bxi: %s called, but no MPI library defines it\n", name);
        if (write(2, line, static_cast<size_t>(n)) < 0) {}
        abort();
    }
    return next;
}

// An `int f(Handle, int*)` query of the MPI library (PMPI_Type_size, PMPI_Comm_size), found
// once; false if the library has none or it fails.
bool query_library(const char* name, std::atomic<int (*)(Handle, int*)>& cached, Handle handle, int& result)
{
    auto f = cached.load(std::memory_order_relaxed);
    if (!f) {
        void* found = dlsym(RTLD_DEFAULT, name);
        if (!found) found = defined_in_loaded_objects(name);
        f = reinterpret_cast<int (*)(Handle, int*)>(found);
        if (!f) return false;
        cached.store(f, std::memory_order_relaxed);
    }
    return f(handle, &result) == 0;
}

// Bytes of `count` elements of `type` (0 if the library cannot tell).
uint64_t bytes_of(int count, Handle type)
{
    static std::atomic<int (*)(Handle, int*)> type_size{nullptr};
    int size = 0;
    if (count <= 0 || !query_library("PMPI_Type_size", type_size, type, size) || size <= 0) return 0;
    return static_cast<uint64_t>(count) * static_cast<uint64_t>(size);
}

// Processes in `comm` (1 if the library cannot tell).
int ranks_of(Handle comm)
{
    static std::atomic<int (*)(Handle, int*)> comm_size{nullptr};
    int size = 1;
    if (!comm || !query_library("PMPI_Comm_size", comm_size, comm, size) || size < 1) return 1;
    return size;
}

// The costs the launcher calibrated (S4BXI_MPI_COST_TABLE), read at the first call; none: the
// library's CPU time is charged as measured, as any compute.
const mpicost::MpiCosts* library_costs()
{
    static const std::optional<mpicost::MpiCosts> costs = []() -> std::optional<mpicost::MpiCosts> {
        const char* text = getenv("S4BXI_MPI_COST_TABLE");
        if (!text || !*text) return std::nullopt;
        std::string_view culprit;
        auto parsed = mpicost::parse_costs(text, &culprit);
        if (!parsed) {
            char line[200];
            int n = snprintf(line, sizeof line, "s4bxi: S4BXI_MPI_COST_TABLE: cannot read '%.*s' (docs/time.md)\n",
                             static_cast<int>(culprit.size()), culprit.data());
            if (write(2, line, static_cast<size_t>(n)) < 0) {}
            abort();
        }
        return parsed;
    }();
    return costs ? &*costs : nullptr;
}

consteval std::array<mpicost::CallCost, wire::kMpiFunctionCount> call_costs()
{
    std::array<mpicost::CallCost, wire::kMpiFunctionCount> table{};
    for (uint32_t i = 0; i < wire::kMpiFunctionCount; ++i) table[i] = mpicost::cost_of(wire::kMpiFunctions[i]);
    return table;
}
constexpr auto kCallCosts = call_costs();

// MPI_IN_PLACE: (void*)1 in Open MPI, (void*)-1 in MPICH.
bool in_place(const void* buffer)
{
    return buffer == reinterpret_cast<const void*>(1) || buffer == reinterpret_cast<const void*>(-1);
}

void push(const wire::CallRecord& record)
{
    wire::CallRecordRing& ring = *call_records();
    uint64_t head = ring.head.load(std::memory_order_relaxed);
    if (head - ring.tail.load(std::memory_order_acquire) >= wire::kCallRecords) drain_call_records();
    ring.records[head % wire::kCallRecords] = record;
    ring.head.store(head + 1, std::memory_order_release);
}

// One MPI call: its interval, if it is the simulated thread's outermost call in a rank.
class Call {
public:
    explicit Call(uint32_t function) : function_(function)
    {
        recording_ = t_depth++ == 0 && is_rank() && on_simulated_thread() && !in_call();
    }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;
    ~Call() { --t_depth; }

    template <class Bytes>
    void begin(Bytes bytes, int peer, Handle comm)
    {
        if (!recording_) return;
        // The wall stamp first: what runs after it, until the library's reading, is ours
        // (rank/cpu_accounting.hpp), not the application's.
        const int64_t wall_entry_ns = host_monotonic_ns();
        timeline_ = call_records()->timeline.load(std::memory_order_relaxed) != 0;
        bytes_ = bytes();
        const mpicost::CallCost kind = kCallCosts[function_];
        if (const mpicost::MpiCosts* costs = library_costs(); costs && kind.kind != mpicost::CostKind::Measured) {
            int ranks = kind.kind == mpicost::CostKind::Collective ? ranks_of(comm) : 1;
            double charge = costs->charge(kind.kind, bytes_, ranks, kind.reduces);
            in_library_ = enter_library(static_cast<uint64_t>(std::llround(charge)), wall_entry_ns, &start_);
        }
        if (!in_library_) start_ = clock_peek();
        if (timeline_) push({static_cast<uint32_t>(wire::CallRecordKind::Begin), function_, peer, 0, start_, bytes_});
    }
    int end(int rc)
    {
        double end = in_library_ ? leave_library() : 0.0;
        if (!recording_ || !is_rank()) return rc;
        if (!in_library_) end = clock_peek();
        Total& total = g_totals[function_];
        ++total.count;
        total.time += end > start_ ? end - start_ : 0.0;
        total.bytes += bytes_;
        g_any_call = true;
        if (timeline_) push({static_cast<uint32_t>(wire::CallRecordKind::End), function_, -1, 0, end, 0});
        return rc;
    }

private:
    uint32_t function_;
    bool recording_ = false;
    bool timeline_ = false;
    bool in_library_ = false;  // charged by the model (enter_library())
    uint64_t bytes_ = 0;
    double start_ = 0.0;
};

}  // namespace

void write_totals()
{
    if (!g_any_call || !call_records()) return;
    for (uint32_t i = 0; i < wire::kMpiFunctionCount; ++i) {
        const Total& total = g_totals[i];
        if (total.count == 0) continue;
        push({static_cast<uint32_t>(wire::CallRecordKind::Total), i, -1,
              static_cast<uint32_t>(std::min<uint64_t>(total.count, UINT32_MAX)), total.time, total.bytes});
    }
    g_any_call = false;
}

}  // namespace s4bxi::interpose::mpi

using s4bxi::interpose::mpi::Aint;
using s4bxi::interpose::mpi::Handle;

// NAME(PARAMS) calls the next NAME(ARGS); BYTES, PEER and COMM (expressions of the
// parameters; COMM nullptr where the call has no communicator) describe the call.
#define S4BXI_MPI(NAME, PARAMS, ARGS, BYTES, PEER, COMM)                                              \
    extern "C" S4BXI_EXPORT int NAME PARAMS                                                    \
    {                                                                                          \
        using namespace s4bxi::interpose::mpi;                                                 \
        using Next = int(*) PARAMS;                                                            \
        static std::atomic<Next> next_fn{nullptr};                                             \
        Next next = next_fn.load(std::memory_order_relaxed);                                   \
        if (!next) {                                                                           \
            next = reinterpret_cast<Next>(resolve(#NAME));                                     \
            next_fn.store(next, std::memory_order_relaxed);                                    \
        }                                                                                      \
        static constexpr uint32_t kFunction = index_of(#NAME);                                 \
        static_assert(kFunction < s4bxi::wire::kMpiFunctionCount, #NAME " is not in kMpiFunctions");  \
        Call call(kFunction);                                                                  \
        call.begin([&]() -> uint64_t { return BYTES; }, PEER, COMM);                           \
        return call.end(next ARGS);                                                            \
    }

#define S4BXI_SEND_LIKE(NAME)                                                                       \
    S4BXI_MPI(NAME, (const void* buf, int count, Handle type, int dest, int tag, Handle comm),      \
              (buf, count, type, dest, tag, comm), bytes_of(count, type), dest, comm)

S4BXI_MPI(MPI_Init, (int* argc, char*** argv), (argc, argv), 0, -1, nullptr)
S4BXI_MPI(MPI_Init_thread, (int* argc, char*** argv, int required, int* provided), (argc, argv, required, provided),
          0, -1, nullptr)
S4BXI_MPI(MPI_Finalize, (), (), 0, -1, nullptr)
S4BXI_SEND_LIKE(MPI_Send)
S4BXI_SEND_LIKE(MPI_Ssend)
S4BXI_SEND_LIKE(MPI_Rsend)
S4BXI_SEND_LIKE(MPI_Bsend)
S4BXI_MPI(MPI_Recv, (void* buf, int count, Handle type, int source, int tag, Handle comm, void* status),
          (buf, count, type, source, tag, comm, status), bytes_of(count, type), source, comm)
S4BXI_MPI(MPI_Isend, (const void* buf, int count, Handle type, int dest, int tag, Handle comm, void* request),
          (buf, count, type, dest, tag, comm, request), bytes_of(count, type), dest, comm)
S4BXI_MPI(MPI_Irecv, (void* buf, int count, Handle type, int source, int tag, Handle comm, void* request),
          (buf, count, type, source, tag, comm, request), bytes_of(count, type), source, comm)
S4BXI_MPI(MPI_Sendrecv,
          (const void* sendbuf, int sendcount, Handle sendtype, int dest, int sendtag, void* recvbuf, int recvcount,
           Handle recvtype, int source, int recvtag, Handle comm, void* status),
          (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status),
          bytes_of(sendcount, sendtype), dest, comm)
S4BXI_MPI(MPI_Sendrecv_replace,
          (void* buf, int count, Handle type, int dest, int sendtag, int source, int recvtag, Handle comm, void* status),
          (buf, count, type, dest, sendtag, source, recvtag, comm, status), bytes_of(count, type), dest, comm)
S4BXI_MPI(MPI_Wait, (void* request, void* status), (request, status), 0, -1, nullptr)
S4BXI_MPI(MPI_Waitall, (int count, void* requests, void* statuses), (count, requests, statuses), 0, -1, nullptr)
S4BXI_MPI(MPI_Waitany, (int count, void* requests, int* index, void* status), (count, requests, index, status), 0, -1, nullptr)
S4BXI_MPI(MPI_Waitsome, (int incount, void* requests, int* outcount, int* indices, void* statuses),
          (incount, requests, outcount, indices, statuses), 0, -1, nullptr)
S4BXI_MPI(MPI_Test, (void* request, int* flag, void* status), (request, flag, status), 0, -1, nullptr)
S4BXI_MPI(MPI_Testall, (int count, void* requests, int* flag, void* statuses), (count, requests, flag, statuses), 0,
          -1, nullptr)
S4BXI_MPI(MPI_Testany, (int count, void* requests, int* index, int* flag, void* status),
          (count, requests, index, flag, status), 0, -1, nullptr)
S4BXI_MPI(MPI_Testsome, (int incount, void* requests, int* outcount, int* indices, void* statuses),
          (incount, requests, outcount, indices, statuses), 0, -1, nullptr)
S4BXI_MPI(MPI_Probe, (int source, int tag, Handle comm, void* status), (source, tag, comm, status), 0, source, comm)
S4BXI_MPI(MPI_Iprobe, (int source, int tag, Handle comm, int* flag, void* status), (source, tag, comm, flag, status),
          0, source, comm)
S4BXI_MPI(MPI_Barrier, (Handle comm), (comm), 0, -1, comm)
S4BXI_MPI(MPI_Bcast, (void* buf, int count, Handle type, int root, Handle comm), (buf, count, type, root, comm),
          bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Reduce, (const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, int root, Handle comm),
          (sendbuf, recvbuf, count, type, op, root, comm), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Allreduce, (const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm),
          (sendbuf, recvbuf, count, type, op, comm), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Gather,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, int root,
           Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
          in_place(sendbuf) ? 0 : bytes_of(sendcount, sendtype), -1, comm)
S4BXI_MPI(MPI_Gatherv,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int* recvcounts, const int* displs,
           Handle recvtype, int root, Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
          in_place(sendbuf) ? 0 : bytes_of(sendcount, sendtype), -1, comm)
S4BXI_MPI(MPI_Scatter,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype, int root,
           Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
          in_place(recvbuf) ? 0 : bytes_of(recvcount, recvtype), -1, comm)
S4BXI_MPI(MPI_Scatterv,
          (const void* sendbuf, const int* sendcounts, const int* displs, Handle sendtype, void* recvbuf, int recvcount,
           Handle recvtype, int root, Handle comm),
          (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
          in_place(recvbuf) ? 0 : bytes_of(recvcount, recvtype), -1, comm)
S4BXI_MPI(MPI_Allgather,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype,
           Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), bytes_of(recvcount, recvtype), -1, comm)
S4BXI_MPI(MPI_Allgatherv,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, const int* recvcounts, const int* displs,
           Handle recvtype, Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
          in_place(sendbuf) ? 0 : bytes_of(sendcount, sendtype), -1, comm)
S4BXI_MPI(MPI_Alltoall,
          (const void* sendbuf, int sendcount, Handle sendtype, void* recvbuf, int recvcount, Handle recvtype,
           Handle comm),
          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm), bytes_of(recvcount, recvtype), -1, comm)
S4BXI_MPI(MPI_Alltoallv,
          (const void* sendbuf, const int* sendcounts, const int* sdispls, Handle sendtype, void* recvbuf,
           const int* recvcounts, const int* rdispls, Handle recvtype, Handle comm),
          (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm), 0, -1, comm)
S4BXI_MPI(MPI_Reduce_scatter,
          (const void* sendbuf, void* recvbuf, const int* recvcounts, Handle type, Handle op, Handle comm),
          (sendbuf, recvbuf, recvcounts, type, op, comm), 0, -1, comm)
S4BXI_MPI(MPI_Reduce_scatter_block,
          (const void* sendbuf, void* recvbuf, int recvcount, Handle type, Handle op, Handle comm),
          (sendbuf, recvbuf, recvcount, type, op, comm), bytes_of(recvcount, type), -1, comm)
S4BXI_MPI(MPI_Scan, (const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm),
          (sendbuf, recvbuf, count, type, op, comm), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Exscan, (const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm),
          (sendbuf, recvbuf, count, type, op, comm), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Ibarrier, (Handle comm, void* request), (comm, request), 0, -1, comm)
S4BXI_MPI(MPI_Ibcast, (void* buf, int count, Handle type, int root, Handle comm, void* request),
          (buf, count, type, root, comm, request), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Iallreduce,
          (const void* sendbuf, void* recvbuf, int count, Handle type, Handle op, Handle comm, void* request),
          (sendbuf, recvbuf, count, type, op, comm, request), bytes_of(count, type), -1, comm)
S4BXI_MPI(MPI_Put,
          (const void* origin, int origin_count, Handle origin_type, int target, Aint disp, int target_count,
           Handle target_type, Handle win),
          (origin, origin_count, origin_type, target, disp, target_count, target_type, win),
          bytes_of(origin_count, origin_type), target, nullptr)
S4BXI_MPI(MPI_Get,
          (void* origin, int origin_count, Handle origin_type, int target, Aint disp, int target_count,
           Handle target_type, Handle win),
          (origin, origin_count, origin_type, target, disp, target_count, target_type, win),
          bytes_of(origin_count, origin_type), target, nullptr)
S4BXI_MPI(MPI_Accumulate,
          (const void* origin, int origin_count, Handle origin_type, int target, Aint disp, int target_count,
           Handle target_type, Handle op, Handle win),
          (origin, origin_count, origin_type, target, disp, target_count, target_type, op, win),
          bytes_of(origin_count, origin_type), target, nullptr)
S4BXI_MPI(MPI_Win_fence, (int assertion, Handle win), (assertion, win), 0, -1, nullptr)
S4BXI_MPI(MPI_Win_lock, (int type, int rank, int assertion, Handle win), (type, rank, assertion, win), 0, rank, nullptr)
S4BXI_MPI(MPI_Win_unlock, (int rank, Handle win), (rank, win), 0, rank, nullptr)
S4BXI_MPI(MPI_Win_flush, (int rank, Handle win), (rank, win), 0, rank, nullptr)
S4BXI_MPI(MPI_Comm_split, (Handle comm, int color, int key, void* newcomm), (comm, color, key, newcomm), 0, -1, comm)
S4BXI_MPI(MPI_Comm_dup, (Handle comm, void* newcomm), (comm, newcomm), 0, -1, comm)

// MPI_Pcontrol is the program's word to its profiling tools. Here that tool is the server,
// which may switch network models at it (network.switch = pcontrol): it hears of each call,
// from whichever thread, before the library does. Not timed: the call moves no data. Every
// MPI library reads only `level` of what may follow it.
extern "C" S4BXI_EXPORT int MPI_Pcontrol(const int level, ...)
{
    using namespace s4bxi::interpose;
    using Next = int (*)(int, ...);
    static std::atomic<Next> next_fn{nullptr};
    Next next = next_fn.load(std::memory_order_relaxed);
    if (!next) {
        next = reinterpret_cast<Next>(mpi::resolve("MPI_Pcontrol"));
        next_fn.store(next, std::memory_order_relaxed);
    }
    if (is_rank()) {
        s4bxi::wire::PcontrolArgs args{level, 0};
        call(s4bxi::wire::Op::Pcontrol, &args, sizeof args);
    }
    return next(level);
}
