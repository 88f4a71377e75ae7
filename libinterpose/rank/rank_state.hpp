// The rank-side runtime: what every interposed entry point (Portals, time, libc) needs to
// know about the current process and how to reach the server.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "s4bxi/call_records.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::interpose {

// True in a registered rank, on any thread. False in launchers, daemons, children of a rank.
bool is_rank();

// True while the rank is inside call(): a signal handler must not start another request.
bool in_call();

// The mirror of the rank's queues and counters (s4bxi/mirror.hpp), if the calling thread
// may read it now: the simulated thread, outside a request and a clock reading, when no
// other thread of the rank is in a request (the server takes events from the mirror while
// it serves one). It then holds the rank's turn at its channel until release_mirror().
wire::Mirror* readable_mirror();
void release_mirror();

// The mirror, for the slots of list entry handles (wire::EntrySlot), with the reply count
// the rank sees them as of (`replies`): its last reply under the zero CPU model, any time
// under the measured one. Null when not a rank.
wire::Mirror* entry_mirror(uint64_t& replies);

// The run uses --cpu-model zero (simulated times reproducible run to run).
bool zero_cpu_model();
// The server lets this rank's threads run in lockstep (--lockstep; libinterpose/threads/).
bool threads_lockstep();

// How many requests the calling thread has made (call()), whether the server or the
// process itself answered them.
uint64_t requests_made();

// Tells the server this rank has finished with `status` (exit, _exit). Idempotent.
void finish_rank(int status);

// The server ended the run for this rank (PMI_Abort): later exits make no request.
void leave_run();

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

// The rank's virtual clock, in seconds since simulated time 0:
//   sim_time_at_last_reply + cpu_time_since_reply * cpu_factor   (measured CPU model)
//   sim_time_at_last_reply                                      (zero CPU model)
// Served locally, without a round trip. On the simulated thread only; it also updates
// threads_clock_offset().
double virtual_now();

// How the rank's other threads see its clock: virtual clock minus host CLOCK_MONOTONIC
// (ns), as of the simulated thread's last clock reading or reply (wire::Slot::
// threads_clock_offset_ns, shared with the server). call() updates it at each reply,
// virtual_now() at each reading on the simulated thread. Meaningful while is_rank().
int64_t threads_clock_offset();
void set_threads_clock_offset(int64_t offset_ns);

// Seconds since 1970 at simulated time 0, for CLOCK_REALTIME / gettimeofday / time.
double virtual_epoch();

// Blocks the rank for `seconds` of simulated time (one round trip to the server).
void simulated_sleep(double seconds);

// A scheduling point with no simulated cost (sched_yield).
void simulated_yield();

// Simulated node name ("node3"), for gethostname/uname.
const char* node_name();

// The program started a thread (pthread_create): counted in the slot for the server.
void count_thread_created();

// libc's pthread_create, for the interposer's own threads (the delivery thread), which
// the server need not look for (thread_creation.cpp).
int create_own_thread(pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument);

// PtlAbort: asks the server to interrupt the rank's blocking wait, if any. No request:
// safe from any thread and from a signal handler, while a wait holds the slot.
void request_abort();

// One request/reply round trip with the server. Fills request.op/seq/cpu_ns itself.
// Returns the reply (valid until the calling thread's next call). Aborts the process with a clear message
// if the server is gone.
const wire::Reply& call(wire::Op op, const void* args, uint32_t args_size);

// Posts a command that the simulated thread does not wait for (wire::PostedCommand: a
// data call, a counter update, a list append or a triggered operation whose arguments the
// caller checked as the server would): the server
// serves it, in order with the rank's requests, exactly as call() would have had it
// served. Returns false when the command must go through call() instead: another thread,
// within a request or a clock reading, an outside episode under way. The rank's clock and
// mirror are brought up to date (the server caught up with) before they are read.
bool post(wire::Op op, const void* args, uint32_t args_size);

// The rank's virtual clock as it stands, with no effect on the run: no accounting of the
// reading, no clock-spin count, no catching up after a wait outside (virtual_now() does
// those). On the simulated thread only. For observation (libinterpose/mpi/).
double clock_peek();

// The simulated thread enters the MPI library, whose code a model charges (`charge_ns` of
// the thread's CPU time, scaled by cpu_factor as compute is) instead of its measured CPU
// time: the virtual clock moves by the charge at once and then stands still until
// leave_library() (docs/time.md "The MPI library's code"). `wall_entry_ns`: the host's
// CLOCK_MONOTONIC as the application called in (what runs after it is not the
// application's). Sets `clock_at_entry` to the clock before the charge. Returns false, and
// changes nothing, where no charge applies: the zero CPU model, another thread, a nested call.
bool enter_library(uint64_t charge_ns, int64_t wall_entry_ns, double* clock_at_entry);
// Leaves it: returns the clock, which runs again from here.
double leave_library();

// The ring of MPI call records shared with the server (s4bxi/call_records.hpp), or null
// when not a rank.
wire::CallRecordRing* call_records();

// Asks the server to drain the ring now (it is full, or holds the totals). Not counted as
// a request of the program's: it changes no clock spin and no free poll.
void drain_call_records();

// Kernel thread id of the simulated thread (0 when not a rank).
int simulated_thread_id();

// Thread CPU time of the calling thread, read by raw syscall (never through our own
// interposed symbols, never caught by our seccomp filter).
uint64_t thread_cpu_ns();

// Raw real-time clock for code that must see the host's time (timeouts, watchdogs): the
// host's CLOCK_MONOTONIC through libc's vDSO path (no system call), in s and in ns.
double real_monotonic();
int64_t host_monotonic_ns();

}  // namespace s4bxi::interpose
