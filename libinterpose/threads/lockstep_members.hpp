// The lockstep's members and turn, shared by its three files: the turn
// (lockstep_turn.cpp), the watchdog that takes it from a thread spinning on memory
// (lockstep_watchdog.cpp), and the blocking calls that hand it over (lockstep_sync.cpp).
// Internal to threads/: the rest of the library uses threads/lockstep.hpp.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>

#include "rank/rank_state.hpp"
#include "s4bxi/wire.hpp"

namespace s4bxi::interpose::lockstep {

// What a thread in lockstep is doing, as the thread with the turn sees it. Every field of
// every member is written by the thread that has the turn only (a new thread waits for it
// before it touches anything): the hand-over of the turn orders them.
enum class State : uint8_t {
    Free,
    Runnable,   // it may go on
    Parked,     // in a Portals wait (`wait`), which may have ended
    OnMutex,    // waits for `object` to be unlocked
    OnCond,     // waits for `object` to be signalled
    OnJoin,     // waits for member `target` to end
    OnBarrier,  // waits for `object`'s other threads
    OnFutex,    // waits for a wake-up on the futex word `object` (the OpenMP runtime's)
    OnRelease,  // waits for a post or an unlock of `object` (a semaphore, a read-write lock)
    Exited,
};

struct Member {
    State state = State::Free;
    // Taken off the turn while it spun (the watchdog), with no call or block since: it is
    // not given the turn again until something happened in the rank since (g_progress moved).
    bool spinning = false;
    uint64_t spun_at = 0;
    pid_t tid = 0;
    clockid_t cpu_clock = 0;
    // Mutexes it holds, and budgets it spent spinning while it held one: taken off the
    // turn holding a mutex, it made the others block where, off at another point of the same
    // spin, they would have gone on (SOS's mt_lock_test spins through mutexes).
    int mutexes_held = 0;
    int budgets_holding = 0;
    // The watchdog's signals to it: one at a time, sent (by the watchdog, which stamps when)
    // and taken (by its handler, on this thread); __atomic builtins, as Member is copied.
    uint32_t signals_sent = 0;
    uint32_t signals_taken = 0;
    int64_t signal_sent_ns = 0;
    // Budgets it spent in system calls in its turn of epoch kernel_epoch (on_preempt_signal).
    int budgets_in_kernel = 0;
    uint64_t kernel_epoch = ~0ull;
    uint64_t armed_epoch = ~0ull;  // a first budget spent in the program's code, in this turn
    bool timed = false;      // OnCond, OnFutex, OnRelease: a timed wait, which ends when nothing else can run
    bool signalled = false;  // ... ended by a signal, a wake-up or a release, not by its timeout
    int target = -1;
    const void* object = nullptr;
    wire::ParkedWait* wait = nullptr;
    pthread_t thread{};
};

constexpr int kMaxMembers = 1024;
inline Member g_members[kMaxMembers];
inline int g_count = 0;  // members 0 .. g_count - 1; 0 is the simulated thread
inline std::atomic<uint32_t> g_turn{0};  // the member that has the turn (futex word)
inline uint64_t g_known_done = 0;        // the rank's ended lockstep waits, as its replies said
inline uint64_t g_known_writes = 0;      // writes into the rank's memory, as its replies said
// Moves at each reply and each time a thread makes another able to go on: a thread taken
// off the turn while it spun may see something new.
inline uint64_t g_progress = 0;
// Budgets spun since progress last moved, with no thread able to go on but spinning ones.
inline int g_idle_spins = 0;
// A semaphore was posted or a read-write lock unlocked by a thread outside the lockstep, or
// within the interposer's code (a signal handler): the thread with the turn lets every
// thread waiting for a release try again at its next hand-over.
inline std::atomic<bool> g_foreign_releases{false};
// Moves at each reply and each hand-over: the watchdog's budget of CPU time counts from its
// last move.
inline std::atomic<uint64_t> g_epoch{0};
// The rank waits in the simulation for one of its threads' waits to end (wait_for_any): the
// thread with the turn waits for the reply, usually within the handler of the signal that
// took it off, where that signal is blocked. The watchdog sends none meanwhile. It sent one
// per budget of the CPU time the wait for the reply used, on a loaded host many, all
// delivered together once the reply came: their handling could spend the next budget
// before the thread was back in its own code, and it was taken off again before it could
// see the write it had waited for (SOS's mt_membar on 4 ranks).
inline std::atomic<bool> g_idle{false};

// In the interposer's code: no preemption.
inline thread_local __attribute__((tls_model("initial-exec"))) volatile bool t_in_lockstep = false;

// CPU time a thread with the turn may use with no call before it is taken for spinning on
// memory, twice in the program's code (its spin goes on where it was when it has the turn
// again): 0.25 ms in all, as when one budget of 0.25 ms did.
constexpr int64_t kSpinBudgetNs = 125'000;
constexpr long kWatchdogPeriodNs = 100'000;
constexpr int kAsleepLooks = 200;  // 20 ms
constexpr int kBudgetsHolding = 5'000'000 / kSpinBudgetNs;  // 5 ms
// A thread taken off the turn while it spun, the only one of its rank that can go on (the
// others block), spins this many budgets (5 ms of CPU time) before the rank waits in the
// simulation for a write into its memory: as long as the server lets a rank of one thread
// compute with no call before it takes it to wait on its memory (kMemoryWaitCpuNs,
// docs/time.md "Waiting on memory"). It may be computing, not spinning: a master thread
// between OpenMP regions, its workers docked (test: lockstep_openmp.c, two parallel
// regions). Several threads spinning at once do wait on memory: they go on after one
// budget, so that SOS's mt_membar stays within its time limit (shmem threaded tests end at
// their own date).
constexpr int kIdleSpins = 5'000'000 / kSpinBudgetNs;
// A thread whose budget the watchdog found spent in a system call keeps the turn for this
// many budgets (20 ms of CPU time, as long as a thread asleep with the turn) before it is
// taken for spinning anyway: a loop may spin through a system call.
constexpr int kBudgetsInKernel = 20'000'000 / kSpinBudgetNs;
// A signal taken this long after it was sent found a thread that did not run meanwhile
// (on_preempt_signal); one the thread has not taken after kSignalLostNs is given up.
constexpr int64_t kLateSignalNs = 1'000'000;
constexpr int64_t kSignalLostNs = 20'000'000;
inline const int kPreemptSignal = SIGRTMAX - 2;

// Something happened in the rank: a thread taken off the turn while it spun may see it.
void progressed();
[[noreturn]] void fail(const char* what);
long futex_call(std::atomic<uint32_t>* word, int op, uint32_t value);
// `me` (with the turn) cannot go on, or yields: the turn goes to the next member that can,
// and `me` waits until it has the turn again. With `leaving`, `me` does not wait.
void pass_turn(int me, bool leaving = false, bool spun = false);
// The simulated thread alone is left: the lockstep ends.
void end_if_alone();
// The calling thread waits on `object` until a thread wakes it (wake_waiters) or, timed,
// until no thread of the rank can go on; true if woken.
bool wait_on(State state, const void* object, bool timed);
// Wakes the first `count` threads waiting on `object` after the calling thread, in the
// rank's order; returns how many it woke.
int wake_waiters(State state, const void* object, int count);
// The watchdog's thread, and its signal's handler, once per process.
void start_watchdog();
// The end of an outermost shielded region: a preemption asked for within it is done now.
void leave_shield();

// Public entry points run shielded from the watchdog's signal.
struct Guard {
    bool outer = !t_in_lockstep;
    Guard() { t_in_lockstep = true; }
    ~Guard()
    {
        if (outer) leave_shield();
    }
};

}  // namespace s4bxi::interpose::lockstep
