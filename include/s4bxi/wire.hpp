// The one contract between libinterpose (the rank side) and simkernel (the server).
//
// Everything that crosses the boundary is defined here, with fixed-size fields only, so
// that both sides agree bit for bit whatever their compile flags. Bump kVersion on any
// change, with a line in its history below: a rank built against another version is
// refused at registration.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace s4bxi::wire {

// The version of this contract, and what each one brought (a rank and a server of two
// versions refuse each other at registration, with both numbers in the message):
//   1  the slot (one request, one reply), the doorbell, Hello and Welcome
//   2  the threads' clock offset in the slot (other threads continue the simulated one's)
//   3  spawn-mode ranks (Welcome carries the world size for PMI-1)
//   4  waits outside the simulation (Op::OutsideWait: PMIx fences announced)
//   5  the mirror of event queues and counters after the slot
//   6  the threads' turn at the slot (Slot::state claimed, each thread its own reply)
//   7  the node layout in the Welcome (ranks per node, for PMIx's node-local keys)
//   8  parked blocking waits; the ring of MPI call records after the mirror
//   9  posted commands (Slot::posted ring)
//  10  copy orders for large payloads (Delivery)
//  11  a parked wait's result in the waiting thread's own record (ParkedWait)
//  12  posted appends, atomics, counter updates and triggered operations
//  13  11 and 12 together
//  14  the program's thread creations counted in the slot (Slot::threads_created)
//  15  a waiting thread carries out the copy order itself (replied_or_delivering)
//  16  threads in lockstep (Request::lockstep, Op::LockstepIdle, Reply::lockstep_done)
//  17  Welcome::threads_lockstep (--lockstep)
//  18  small payloads carried in the command (DataCommand)
//  19  the MPI library's charge (Slot::cpu_frozen_ns, FinalizeArgs::library_charged_ns)
//  20  the program's OpenSHMEM waits and tests counted in the slot (Slot::memory_polls)
//  21  the program's MPI_Pcontrol calls (Op::Pcontrol)
//  22  ranks on other machines: the frames between the server and the agents, and between
//      agents (remote_wire.hpp)
inline constexpr uint32_t kVersion = 22;
inline constexpr size_t kArgBytes = 1024;
inline constexpr size_t kNameBytes = 64;

// ---------------------------------------------------------------------------------------
// Registration, over the unix socket (SOCK_SEQPACKET, one message each way).

struct Hello {
    uint32_t version;
    int32_t rank;        // world rank as the rank's environment gives it
    int32_t world_size;  // expected number of ranks (0: unknown)
    int32_t pid;         // getpid() of the rank (checked against SO_PEERCRED)
    int32_t tid;         // thread that registered: the simulated thread
    uint32_t flags;      // kHelloReattach
};

// The rank exec'd a new program (a wrapper script, a shim): same process, same rank, new
// image. It keeps its socket across exec and asks for its channel again.
inline constexpr uint32_t kHelloReattach = 1;
// The program is an OpenSHMEM program (it has shmem_init): it may wait on its own memory
// for a remote write, with no Portals call (docs/time.md "Waiting on memory").
inline constexpr uint32_t kHelloOpenShmem = 2;

struct Welcome {
    int32_t status;       // 0 on success; otherwise the reason string says why
    uint32_t nid;         // simulated node of this rank
    uint32_t core;        // core index inside the node
    uint32_t node_count;  // nodes in the platform
    int32_t server_pid;   // for liveness checks
    // For PR_SET_PTRACER: the process that started the server and the ranks (the
    // launcher), or the server itself. Under Yama's ptrace_scope=1 it lets the server and
    // the other ranks, its descendants, read and write this rank's memory (Delivery).
    int32_t ptracer_pid;
    // platform.copy_once_from: payloads of this size or more are copied by the rank's
    // delivery thread (0: never), which the rank starts when it first binds or appends
    // this much memory (Delivery).
    uint64_t copy_once_from;
    uint32_t cpu_model;   // CpuModel
    uint32_t threads_lockstep;  // 1: the rank's threads may run in lockstep (--lockstep)
    double cpu_factor;
    double cpu_threshold;  // seconds; compute below it is ignored
    double epoch;          // seconds since 1970 at simulated time 0 (for CLOCK_REALTIME)
    int32_t world_size;      // ranks in the run (PMI_Get_size)
    int32_t ranks_per_node;  // --ppn: ranks r of one node are those with the same r / ranks_per_node
    char node_name[kNameBytes];
    char reason[256];
};

enum class CpuModel : uint32_t { Measured = 0, Zero = 1 };

// ---------------------------------------------------------------------------------------
// The channel: one shared page per rank, plus one doorbell shared by all ranks.

enum class SlotState : uint32_t {
    Idle = 0,     // the rank owns the slot and is running its own code
    Posted = 1,   // a request is waiting for the server
    Replied = 2,  // the reply is ready for the rank
    // Taken (from Idle, by compare-and-swap) by whoever is writing a request: a thread of
    // the rank, or the server answering a trapped syscall of its simulated thread.
    Claimed = 3,
};

// Operation codes. Values are part of the protocol; never reuse a retired number.
enum class Op : uint32_t {
    Invalid = 0,
    // process and time
    Finalize = 1,  // the rank is exiting normally; args: FinalizeArgs
    Sleep = 2,     // args: SleepArgs
    Yield = 3,     // sched_yield: a scheduling point, no simulated cost
    Backtrace = 4, // the rank reports a backtrace text (args: TextArgs) before dying
    // PMI-1 bootstrap of spawn-mode ranks (pmi_service.hpp)
    PmiBarrier = 5,  // no args; the reply comes when every rank has arrived
    PmiKvsPut = 6,   // args: PmiKvsArgs
    PmiKvsGet = 7,   // args: PmiKvsArgs (value empty); reply: PmiKvsArgs with the value, rc 0 or -1
    // The rank is about to wait outside the simulation (a PMIx call of its process
    // manager); args: OutsideWaitArgs. Its next request ends the wait.
    OutsideWait = 8,
    // PMI_Abort of a spawn-mode rank (args: AbortArgs): the run ends at once with its status.
    PmiAbort = 9,
    // Portals 4 (10..)
    PtlInit = 10,
    PtlFini,
    PtlNIInit,
    PtlNIFini,
    PtlPTAlloc,
    PtlPTFree,
    PtlMDBind,
    PtlMDRelease,
    PtlMEAppend,
    PtlMEUnlink,
    PtlEQAlloc,
    PtlEQFree,
    PtlEQGet,
    PtlEQWait,
    PtlEQPoll,
    PtlCTAlloc,
    PtlCTFree,
    PtlCTGet,
    PtlCTWait,
    PtlCTPoll,
    PtlCTSet,
    PtlCTInc,
    PtlPut,
    PtlGet,
    PtlAtomic,
    PtlPTEnable,
    PtlPTDisable,
    PtlGetId,
    PtlGetPhysId,
    PtlGetUid,
    PtlFetchAtomic,
    PtlSwap,
    PtlMESearch,  // args: MEAppendArgs, `list` holding the search operation
    PtlTriggered,          // args: TriggeredArgs
    PtlCTCancelTriggered,  // args: HandleArgs
    PtlSetMap,             // args: MapArgs
    PtlGetMap,             // args: MapArgs; reply: HandleReply.process = actual size
    PtlNIStatus,           // args: HandleArgs (reserved = register); reply: HandleReply.value
    PtlNIHandle,           // args: HandleArgs; reply: HandleReply.handle
    // Not a Portals call: the rank's ring of MPI call records (call_records.hpp) is full,
    // or holds its totals; no args. The server drains it and replies at once.
    CallRecords,
    // Lockstep threads (libinterpose/threads/lockstep.hpp): no thread of the rank can go on
    // until one of their parked waits ends. Args: LockstepIdleArgs. The reply comes when
    // the rank's count of ended lockstep waits (Reply::lockstep_done) is above the one the
    // rank knew, or, for threads that spin on memory, when a write lands in the rank's
    // memory; until then the rank waits in the simulation.
    LockstepIdle,
    // Not a Portals call: the program called MPI_Pcontrol (args: PcontrolArgs), which may
    // switch the network model (network.switch = pcontrol). Served at once, at no cost.
    Pcontrol,
    Count
};

struct Request {
    uint32_t op;      // Op
    uint32_t seq;     // echoed in the reply
    uint64_t cpu_ns;  // CPU time of the simulated thread since the last reply
    // 1 when another thread of the rank made the request: its reply leaves the simulated
    // thread's state (computing or blocked outside) as it was.
    uint32_t other_thread;
    int32_t tid;  // kernel thread id of the thread that made the request
    // 1 when the rank's threads run in lockstep (libinterpose/threads/lockstep.hpp): one at
    // a time, in an order of the rank's own; the rank holds simulated time while one runs.
    uint32_t lockstep;
    uint32_t reserved;
    // A blocking wait's (parkable()): the address, in the rank's memory, of the thread's
    // ParkedWait, where the server writes the wait's result if it parks it; 0 otherwise.
    uint64_t parked_record;
    alignas(8) uint8_t args[kArgBytes];
};

struct Reply {
    int32_t rc;         // PTL_* return code or 0
    uint32_t seq;
    double sim_time;    // simulated time (s) at which the reply is given
    // How many of the rank's lockstep waits had ended when the reply was given
    // (ParkedWait::done_number): what the rank may know of them from this reply on.
    uint64_t lockstep_done;
    // How many writes of the simulated NIC had landed in the memory of a rank in lockstep.
    uint64_t memory_writes;
    alignas(8) uint8_t args[kArgBytes];
};

// A blocking wait (PtlCTWait, PtlEQWait, PtlCTPoll and PtlEQPoll with a timeout) that the
// server parked: it answered the request with kParkedRc, so that the rank's other threads
// may use the slot while the wait goes on in simulated time. The result goes to a
// ParkedWait in the waiting thread's own memory (Request::parked_record), which the server
// writes (process_vm_writev), `state` last; then it bumps the slot's `parked_done`, on
// which every thread in a parked wait sleeps. Each wait has its record: there is no limit
// to the number of threads in parked waits, and none of them holds the slot.
inline constexpr int32_t kParkedRc = -0x5041524b;  // "PARK"
inline constexpr size_t kParkedResultBytes = 96;  // an EventReply or a CTReply

enum class ParkedState : uint32_t { Waiting = 1, Done = 2 };

struct ParkedWait {
    std::atomic<uint32_t> state;  // ParkedState
    int32_t rc;
    double sim_time;
    uint64_t done_number;  // a lockstep wait's: its rank's count of ended lockstep waits with it
    alignas(8) uint8_t result[kParkedResultBytes];
};
static_assert(offsetof(ParkedWait, state) == 0 && sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

// A copy order of the server to a rank's delivery thread (libinterpose/delivery): "read
// `length` bytes at `source_address` of process `peer_pid` into my `target_address`", or,
// with `writes`, "write my `length` bytes at `source_address` into `target_address` of
// process `peer_pid`" (the sending rank's half of a payload split between both ranks).
// The kernel then copies a payload once, from one rank's pages into the other's, where
// the server would read it into a buffer of its own and write it out again (docs/model.md
// "How payloads move").
enum class DeliveryState : uint32_t {
    Idle = 0,    // no order; the thread sleeps on `state` (futex)
    Posted = 1,  // the server posted an order: the thread takes it (or a thread of the rank
                 // waiting awake for its reply does), or the server withdraws it
    Taken = 2,   // a thread is copying; the server sleeps on `state` (futex)
    Done = 3,    // `error` and `moved` tell the outcome; the server sets Idle again
};

struct alignas(64) Delivery {
    std::atomic<uint32_t> state;     // DeliveryState
    std::atomic<uint32_t> thread_id;  // kernel id of the thread while it serves orders (0: none)
    std::atomic<uint32_t> sleepers;  // futex waiters on `state` (the thread, the server)
    int32_t peer_pid;  // the other rank's process
    uint64_t source_address;
    uint64_t target_address;
    uint64_t length;
    int32_t error;    // errno of the copy that stopped short, 0 if none
    uint32_t writes;  // 1: this rank holds the source and writes into the peer; 0: it reads
    uint64_t moved;  // bytes copied
};

// A command the rank posted without waiting for the server (docs/time.md "Posted
// commands"): a data call, a counter update, a list append or a triggered operation whose
// arguments the rank checked itself, as a NIC takes a doorbell write. The server serves
// the rank's posted commands in order, each exactly as the same request would have been
// served, before the rank's next request, and writes no reply: it writes the command's
// end date into the slot (sim_time_at_reply_bits) and counts it (posted_served).
inline constexpr uint32_t kPostedRing = 16;

struct PostedCommand {
    uint32_t op;      // Op::PtlPut, PtlGet, PtlAtomic, PtlFetchAtomic, PtlSwap, PtlCTInc, PtlCTSet, PtlMEAppend, PtlTriggered
    uint32_t reserved;
    uint64_t cpu_ns;  // as Request::cpu_ns: CPU time of the simulated thread since the previous command
    alignas(8) uint8_t args[264];  // DataCommand, CTArgs, MEAppendArgs, TriggeredArgs
};

struct alignas(64) Slot {
    std::atomic<uint32_t> state;  // SlotState
    std::atomic<uint32_t> sleepers;  // threads in a futex wait on `state` (slot_futex.hpp)
    // Written by the rank right after it reads a reply: its thread CPU clock at that
    // instant, so that the server can compute the rank's virtual clock on its own
    // (seccomp notifications of direct time syscalls).
    std::atomic<uint64_t> cpu_at_reply_ns;
    std::atomic<uint64_t> sim_time_at_reply_bits;  // bit pattern of the double
    // The rank's virtual clock (ns of simulated time) minus the host's CLOCK_MONOTONIC (ns),
    // both as of the simulated thread's last clock reading or reply: the rank's other
    // threads show host CLOCK_MONOTONIC + this (docs/time.md). Written by the rank, and by
    // the server when it answers the simulated thread's trapped clock reads and sleeps.
    std::atomic<int64_t> threads_clock_offset_ns;
    // While the simulated thread runs the MPI library's code, whose cost a model charges
    // instead of its CPU time: the CPU clock at which the virtual clock stands still
    // (timemath::charged_cpu_ns); 0 otherwise. Written by the rank, moved to the CPU clock
    // at a reply, by the rank or by the server when it answers a trapped sleep.
    std::atomic<uint64_t> cpu_frozen_ns;
    // Bumped by PtlAbort, from any thread or a signal handler, without a request (the
    // thread that waits holds the slot): the server interrupts the rank's blocking wait.
    std::atomic<uint32_t> aborts;
    // Exit status + 1 of a thread that exits the process while another thread's request
    // holds the slot (0: none): the server reads it when the process is gone.
    std::atomic<uint32_t> exit_status_plus_one;
    // Threads of the rank waiting for their turn at the slot: while there are any, the
    // server parks the blocking wait of the thread that holds it (ParkedWait), and the
    // rank is not deadlocked (one of them may make the call the rank waits for). A thread
    // that starts to wait rings the doorbell.
    std::atomic<uint32_t> turn_waiters;
    // Threads the program has started since the rank registered (pthread_create): while
    // some of them are new to the server, one may be on its way to the call a wait waits
    // for, and the server looks at them before it takes the rank for deadlocked.
    std::atomic<uint32_t> threads_created;
    // Bumped by the server each time it has written a parked wait's result (ParkedWait):
    // the threads in parked waits sleep on it (futex) and look at their own record.
    std::atomic<uint32_t> parked_done;
    // Posted commands (PostedCommand): written by the simulated thread, which then bumps
    // posted_head; the server bumps posted_served after serving each one, and wakes the
    // rank if it sleeps on that word (posted_sleepers) waiting for the server to catch up.
    std::atomic<uint32_t> posted_head;
    std::atomic<uint32_t> posted_served;
    std::atomic<uint32_t> posted_sleepers;
    // The program's OpenSHMEM point-to-point waits (shmem_*_test*, shmem_*_wait*), counted
    // by the rank as it calls them (libinterpose/shmem/): a rank computing with no request
    // in one of them, or calling tests, is waiting on its memory; one that is not may be
    // computing over memory it has touched, and the server gives it a longer budget
    // (docs/time.md, waiting on memory). memory_polls counts the calls begun,
    // memory_waits_open the waits under way.
    std::atomic<uint32_t> memory_polls;
    std::atomic<uint32_t> memory_waits_open;
    PostedCommand posted[kPostedRing];
    Request request;
    Reply reply;
    Delivery delivery;

    // The simulated time of the last reply, as the rank counts its clock from.
    double sim_time_at_reply() const
    {
        uint64_t bits = sim_time_at_reply_bits.load(std::memory_order_acquire);
        double sim_time;
        std::memcpy(&sim_time, &bits, sizeof sim_time);
        return sim_time;
    }
};

// Rung by every rank after posting a request; the gate waits on `count` (futex).
struct alignas(64) Doorbell {
    std::atomic<uint32_t> count;
    std::atomic<uint32_t> server_waiting;  // nonzero while the gate sleeps on the futex
};

static_assert(std::is_standard_layout_v<Slot>);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// ---------------------------------------------------------------------------------------
// Arguments of the process and time operations.

struct FinalizeArgs {
    int32_t exit_status;
    int32_t reserved;
    uint64_t mpi_library_ns;  // the MPI library model's charges, ns of the thread's CPU time (included in its requests' cpu_ns)
};

struct AbortArgs {
    int32_t exit_status;
    uint32_t length;
    char text[kArgBytes - 8];  // the program's message
};

struct SleepArgs {
    double seconds;
};

struct LockstepIdleArgs {
    uint64_t known_done;  // the highest Reply::lockstep_done the rank has seen
    // Its threads that can go on all spin on memory: a write into the rank's memory ends
    // the wait too (docs/time.md "Waiting on memory").
    uint32_t on_memory;
    uint32_t reserved;
    uint64_t known_writes;  // the highest Reply::memory_writes it has seen: a later one ends the wait at once
};

struct PcontrolArgs {
    int32_t level;  // MPI_Pcontrol's argument
    uint32_t reserved;
};

struct TextArgs {
    uint32_t length;
    char text[kArgBytes - 8];
};

// What kind of wait outside the simulation a rank announces (simkernel/services/outside_waits.hpp).
enum class OutsideWaitKind : uint32_t {
    Local = 0,       // completes without the other ranks (PMIx_Finalize, event handler registration)
    Collective = 1,  // completes when every participant has entered it (a PMIx fence)
    Unknown = 2,     // may depend on other ranks in ways the rank cannot tell
};

inline constexpr size_t kMaxOutsideParticipants = 240;

struct OutsideWaitArgs {
    uint32_t kind;   // OutsideWaitKind
    uint32_t count;  // Collective: ranks listed in `ranks`; 0 = every rank of the run
    char what[48];   // the call, for reports ("PMIx_Fence_nb")
    int32_t ranks[kMaxOutsideParticipants];
};
static_assert(sizeof(OutsideWaitArgs) <= kArgBytes);

// ---------------------------------------------------------------------------------------
// Arguments of the PMI operations. The sizes are what PMI_KVS_Get_*_length_max report
// (terminating NUL included): one request holds a name, a key and a value.

inline constexpr size_t kPmiNameBytes = 64;
inline constexpr size_t kPmiKeyBytes = 64;
inline constexpr size_t kPmiValueBytes = 768;

struct PmiKvsArgs {
    char name[kPmiNameBytes];
    char key[kPmiKeyBytes];
    char value[kPmiValueBytes];
};
static_assert(sizeof(PmiKvsArgs) <= kArgBytes);

// ---------------------------------------------------------------------------------------
// Arguments of the Portals operations. Handles are the 32-bit values of portals4.h;
// ptl_process_t travels as its 8 raw bytes; ptl_event_t (80 bytes) as raw bytes.

inline constexpr size_t kEventBytes = 80;
inline constexpr size_t kLimitsBytes = 96;

struct NIInitArgs {
    uint32_t iface;
    uint32_t options;
    uint32_t pid;
    uint32_t has_desired;
    uint8_t desired[kLimitsBytes];  // ptl_ni_limits_t
};
struct NIInitReply {
    uint32_t ni;
    uint32_t reserved;
    uint8_t actual[kLimitsBytes];
};

struct HandleArgs {  // NIFini, MDRelease, MEUnlink, EQFree, CTFree, EQGet, EQWait, CTGet
    uint32_t handle;
    uint32_t reserved;
};

struct HandleReply {  // NIInit-like allocations, GetId, GetUid
    uint32_t handle;
    uint32_t value;    // PT index, uid
    uint64_t process;  // ptl_process_t raw
};

struct PTAllocArgs {
    uint32_t ni;
    uint32_t options;
    uint32_t eq;
    uint32_t pt_index;
};

struct PTIndexArgs {  // PTFree, PTEnable, PTDisable
    uint32_t ni;
    uint32_t pt_index;
};

struct MDBindArgs {
    uint32_t ni;
    uint32_t options;
    uint64_t start;
    uint64_t length;
    uint32_t eq;
    uint32_t ct;
};

struct MEAppendArgs {
    uint32_t ni;
    uint32_t pt_index;
    uint64_t start;
    uint64_t length;
    uint32_t ct;
    uint32_t uid;
    uint32_t options;
    uint32_t list;
    uint64_t match_id;  // ptl_process_t raw
    uint64_t match_bits;
    uint64_t ignore_bits;
    uint64_t min_free;
    uint64_t user_ptr;
    uint32_t is_le;  // non-matching list entry
    // PtlMEAppend, triggered or not: the entry's handle, which the rank chose (mirror.hpp,
    // EntrySlot); 0 for the server to choose one past the mirrored slots.
    uint32_t handle;
};
static_assert(sizeof(MEAppendArgs) <= sizeof(PostedCommand::args));

struct EQAllocArgs {
    uint32_t ni;
    uint32_t reserved;
    uint64_t count;
};

struct EQPollArgs {
    uint32_t size;
    uint32_t timeout_ms;  // PTL_TIME_FOREVER for none
    uint32_t handles[64];
};
inline constexpr uint32_t kMaxPollHandles = 64;

struct EventReply {
    uint32_t which;
    uint32_t reserved;
    uint8_t event[kEventBytes];  // ptl_event_t
};

struct CTArgs {  // CTWait (test), CTSet/CTInc (value)
    uint32_t ct;
    uint32_t reserved;
    uint64_t success;
    uint64_t failure;
};

struct CTPollArgs {
    uint32_t size;
    uint32_t timeout_ms;
    uint32_t handles[kMaxPollHandles];
    uint64_t tests[kMaxPollHandles];
};

struct CTReply {
    uint64_t success;
    uint64_t failure;
    uint32_t which;
    uint32_t reserved;
};
static_assert(sizeof(CTReply) <= kParkedResultBytes && sizeof(EventReply) <= kParkedResultBytes);

struct DataArgs {  // PtlPut, PtlGet, PtlAtomic
    uint32_t md;
    uint32_t pt_index;
    uint64_t local_offset;
    uint64_t length;
    uint64_t target;  // ptl_process_t raw
    uint64_t match_bits;
    uint64_t remote_offset;
    uint64_t user_ptr;
    uint64_t hdr_data;
    uint32_t ack_req;
    uint32_t atomic_op;
    uint32_t atomic_type;
    uint32_t reserved;
};

static_assert(sizeof(DataArgs) <= sizeof(PostedCommand::args));

struct FetchArgs {  // PtlFetchAtomic, PtlSwap: `data.md` is the put MD (the operand)
    DataArgs data;
    uint32_t get_md;
    uint32_t reserved;
    uint64_t local_get_offset;
    uint8_t operand[32];  // PtlSwap's compare/mask operand: one element of the datatype
};

// The bytes of a small payload, copied by the rank from its MD at the call, so that the
// server need not read them from the rank's memory (a system call per message): a Put's,
// an Atomic's, a FetchAtomic's or a Swap's whose MD is no I/O vector, up to
// kCarriedPayloadBytes. Triggered operations carry none: their payload is read when they
// fire (docs/model.md "How payloads move").
inline constexpr size_t kCarriedPayloadBytes = 64;

struct DataCommand {  // PtlPut, PtlGet, PtlAtomic, PtlFetchAtomic, PtlSwap, posted or not
    FetchArgs fetch;          // only `data` for Put, Get and Atomic
    uint32_t carried_length;  // 0 (none), or the call's length: its payload is `carried`
    uint32_t reserved;
    uint8_t carried[kCarriedPayloadBytes];
};
static_assert(sizeof(DataCommand) <= sizeof(PostedCommand::args));

struct MapArgs {  // the map itself stays in the rank's memory: the server reads or writes it
    uint32_t ni;
    uint32_t reserved;
    uint64_t size;     // entries
    uint64_t address;  // ptl_process_t array
};

struct TriggeredArgs {
    uint32_t op;  // the operation to trigger: PtlPut, PtlGet, PtlAtomic, PtlFetchAtomic, PtlSwap, PtlCTInc,
                  // PtlCTSet, PtlMEAppend, PtlMEUnlink
    uint32_t trigger_ct;
    uint64_t threshold;
    FetchArgs fetch;      // data operations (only `data` for Put, Get, Atomic)
    CTArgs counter;       // PtlCTInc / PtlCTSet: the counter and the value
    MEAppendArgs entry;   // PtlMEAppend; reply: HandleReply.handle, valid at once
    uint32_t entry_handle;  // PtlMEUnlink
    uint32_t reserved;
};
static_assert(sizeof(TriggeredArgs) <= kArgBytes && sizeof(TriggeredArgs) <= sizeof(PostedCommand::args));

template <class T>
T& args_as(uint8_t (&args)[kArgBytes])
{
    static_assert(sizeof(T) <= kArgBytes && std::is_trivially_copyable_v<T>);
    return *reinterpret_cast<T*>(args);
}
template <class T>
const T& args_as(const uint8_t (&args)[kArgBytes])
{
    static_assert(sizeof(T) <= kArgBytes && std::is_trivially_copyable_v<T>);
    return *reinterpret_cast<const T*>(args);
}

// A blocking wait the server may park (ParkedWait): PtlCTWait, PtlEQWait, and PtlCTPoll
// and PtlEQPoll with a timeout (0xffffffff is PTL_TIME_FOREVER). A poll with no timeout
// returns at once, or after the fast-forward of an empty poll.
inline bool parkable(Op op, const uint8_t (&args)[kArgBytes])
{
    switch (op) {
    case Op::PtlCTWait:
    case Op::PtlEQWait: return true;
    case Op::PtlCTPoll: return args_as<CTPollArgs>(args).timeout_ms != 0;
    case Op::PtlEQPoll: return args_as<EQPollArgs>(args).timeout_ms != 0;
    default: return false;
    }
}

}  // namespace s4bxi::wire
