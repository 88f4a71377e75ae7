// The rank's state: who this process is in the run, what the server told it at
// registration, the channel's shared memory, and the per-thread flags every layer above
// reads. The bottom layer of the library: it includes no other folder of it.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>

#include "rank/cpu_accounting.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::interpose {

struct RankState {
    bool active = false;
    bool launched = false;  // rank from S4BXI_RANK (spawn mode)
    int rank = -1;
    pid_t pid = 0;
    pid_t tid = 0;
    int socket_fd = -1;
    wire::Slot* slot = nullptr;
    wire::Doorbell* doorbell = nullptr;
    wire::Welcome welcome{};
    int64_t wall_at_reply_ns = 0;  // host CLOCK_MONOTONIC at the last reply
    std::atomic<bool> in_call{false};  // some thread's request holds the slot
    // What of the simulated thread's CPU time is the interposer's (cpu_accounting.hpp).
    cpuacct::Ledger ledger{};
    bool in_reading = false;  // the virtual clock is updating the ledger
    uint64_t library_charged_ns = 0;  // the MPI library model's charges (enter_library())
    uint32_t posted_head = 0;  // commands the simulated thread posted (post()), as in the slot
    // The mirror's reply count at the simulated thread's last reply: a point of the run
    // that is the same from one run to the next, unlike a catch-up (a full ring's is not).
    // Written by the simulated thread, read by any thread that appends.
    std::atomic<uint64_t> replies_known{0};
};

// The one rank of this process. Written at registration (startup/), then by the channel
// and the clock.
extern RankState g_rank;

// Calls of call() by this thread, answered locally or not.
extern thread_local __attribute__((tls_model("initial-exec"))) uint64_t t_requests;
// Requests this thread posted on the slot (the ones answered locally left out): what a
// clock spin takes for the program doing something (time/clock_spin.hpp).
extern thread_local __attribute__((tls_model("initial-exec"))) uint32_t t_posted;
// This thread's request holds the slot (g_rank.in_call: some thread's does).
extern thread_local __attribute__((tls_model("initial-exec"))) bool t_in_call;
// Set while this thread holds a ticket that is not served yet: a signal handler that
// interrupted it there and made a Portals call would wait behind its own ticket for ever.
extern thread_local volatile bool t_waiting_for_turn;
// Set while this thread is in post(): a signal handler's call then goes to the server.
extern thread_local volatile bool t_in_post;
// The thread's place in its rank's lockstep (threads/lockstep.hpp), -1 outside it; and
// whether the rank's lockstep runs at all. Written by threads/ only; read by every layer
// that must treat a thread in lockstep as the simulated thread's peer.
extern thread_local __attribute__((tls_model("initial-exec"))) int t_lockstep_index;
extern std::atomic<bool> g_lockstep_running;

// Ends the process with a message naming the rank (exit status 70).
[[noreturn]] void fatal(const char* what);

// Kernel id of the calling thread, cached per thread.
pid_t current_tid();

// True in a registered rank, on any thread. False in launchers, daemons, children of a rank.
bool is_rank();

// The server ended the run for this rank (PMI_Abort): later exits make no request.
void leave_run();

// True while the rank is inside call(): a signal handler must not start another request.
bool in_call();

// The run uses --cpu-model zero (simulated times reproducible run to run).
bool zero_cpu_model();
// The server lets this rank's threads run in lockstep (--lockstep; libinterpose/threads/).
bool threads_lockstep();

// The calling thread runs in its rank's lockstep (threads/lockstep.hpp).
inline bool on_lockstep_thread()
{
    return t_lockstep_index >= 0 && g_lockstep_running.load(std::memory_order_relaxed);
}
// The rank's threads run in lockstep now: every call is a request.
inline bool lockstep_running()
{
    return g_lockstep_running.load(std::memory_order_acquire);
}

// How many requests the calling thread has made (call()), whether the server or the
// process itself answered them.
uint64_t requests_made();

// World rank of this process (-1 when not a rank).
int rank_id();

// Ranks in the run, as the server counts them at registration (0 when not a rank).
int world_size();

// Ranks per simulated node (--ppn): ranks r and s share a node when r / ppn == s / ppn
// (0 when not a rank).
int ranks_per_node();

// True in a rank that s4bxi-launch started itself (spawn mode: its rank came from
// S4BXI_RANK), which has no other process manager: the PMI-1 entry points serve it.
bool launched_rank();

// True when the calling thread is the rank's simulated thread (the one that registered).
// Other threads keep real time.
bool on_simulated_thread();

// Kernel thread id of the simulated thread (0 when not a rank).
int simulated_thread_id();

// Seconds since 1970 at simulated time 0, for CLOCK_REALTIME / gettimeofday / time.
double virtual_epoch();

// Simulated node name ("node3"), for gethostname/uname.
const char* node_name();

// The program started a thread (pthread_create): counted in the slot for the server.
void count_thread_created();

// libc's pthread_create, for the interposer's own threads (the delivery thread), which
// the server need not look for.
int create_own_thread(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument);

// Thread CPU time of the calling thread, read by raw syscall (never through our own
// interposed symbols, never caught by our seccomp filter).
uint64_t thread_cpu_ns();

// Raw real-time clock for code that must see the host's time (timeouts, watchdogs): the
// host's CLOCK_MONOTONIC through libc's vDSO path (no system call), in s and in ns.
double real_monotonic();
int64_t host_monotonic_ns();

}  // namespace s4bxi::interpose
