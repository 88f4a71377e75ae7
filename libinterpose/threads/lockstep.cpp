#include "threads/lockstep.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fcntl.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/thread_state.hpp"
#include "threads/openmp_futex.hpp"
#include "time/seccomp_filter.hpp"

// glibc's own, under the second name it exports them by (the first is ours).
extern "C" {
int s4bxi_libc_mutex_trylock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_trylock, __pthread_mutex_trylock@GLIBC_2.2.5");
int s4bxi_libc_mutex_unlock(pthread_mutex_t* mutex);
__asm__(".symver s4bxi_libc_mutex_unlock, __pthread_mutex_unlock@GLIBC_2.2.5");
}

namespace s4bxi::interpose::lockstep {
namespace {

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
Member g_members[kMaxMembers];
int g_count = 0;  // members 0 .. g_count - 1; 0 is the simulated thread
std::atomic<uint32_t> g_turn{0};  // the member that has the turn (futex word)
uint64_t g_known_done = 0;        // the rank's ended lockstep waits, as its replies said
uint64_t g_known_writes = 0;      // writes into the rank's memory, as its replies said
// Moves at each reply and each time a thread makes another able to go on: a thread taken
// off the turn while it spun may see something new.
uint64_t g_progress = 0;
// Budgets spun since progress last moved, with no thread able to go on but spinning ones.
int g_idle_spins = 0;
// A semaphore was posted or a read-write lock unlocked by a thread outside the lockstep, or
// within the interposer's code (a signal handler): the thread with the turn lets every
// thread waiting for a release try again at its next hand-over.
std::atomic<bool> g_foreign_releases{false};
// Moves at each reply and each hand-over: the watchdog's budget of CPU time counts from its
// last move.
std::atomic<uint64_t> g_epoch{0};
// The rank waits in the simulation for one of its threads' waits to end (wait_for_any): the
// thread with the turn waits for the reply, usually within the handler of the signal that
// took it off, where that signal is blocked. The watchdog sends none meanwhile. It sent one
// per budget of the CPU time the wait for the reply used, on a loaded host many, all
// delivered together once the reply came: their handling could spend the next budget
// before the thread was back in its own code, and it was taken off again before it could
// see the write it had waited for (SOS's mt_membar on 4 ranks).
std::atomic<bool> g_idle{false};

// In the interposer's code: no preemption.
thread_local __attribute__((tls_model("initial-exec"))) volatile bool t_in_lockstep = false;

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
// between OpenMP regions, its workers docked. With 0.25 ms, 1.5 ms of computation at the
// end of a run let simulated time run to another rank's next event, and ranks ended at
// other dates from run to run. Several threads spinning at once wait on memory indeed
// (SOS's mt_membar): they go on after a budget (with 5 ms, mt_membar took 27 s instead
// of 4 on 2 ranks).
constexpr int kIdleSpins = 5'000'000 / kSpinBudgetNs;
// A thread whose budget the watchdog found spent in a system call keeps the turn for this
// many budgets (20 ms of CPU time, as long as a thread asleep with the turn) before it is
// taken for spinning anyway: a loop may spin through a system call.
constexpr int kBudgetsInKernel = 20'000'000 / kSpinBudgetNs;
// A signal taken this long after it was sent found a thread that did not run meanwhile
// (on_preempt_signal); one the thread has not taken after kSignalLostNs is given up.
constexpr int64_t kLateSignalNs = 1'000'000;
constexpr int64_t kSignalLostNs = 20'000'000;
const int kPreemptSignal = SIGRTMAX - 2;

// Something happened in the rank: a thread taken off the turn while it spun may see it.
void progressed()
{
    ++g_progress;
    g_idle_spins = 0;
}

[[noreturn]] void fail(const char* what)
{
    std::fprintf(stderr, "s4bxi: rank %d: %s\n", rank_id(), what);
    std::fflush(stderr);
    _exit(127);
}

long futex_call(std::atomic<uint32_t>* word, int op, uint32_t value)
{
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

void take_turn(int me)
{
    while (true) {
        uint32_t turn = g_turn.load(std::memory_order_acquire);
        if (static_cast<int>(turn) == me) return;
        futex_call(&g_turn, FUTEX_WAIT_PRIVATE, turn);
    }
}

void hand_turn(int to)
{
    g_epoch.fetch_add(1, std::memory_order_relaxed);
    g_turn.store(static_cast<uint32_t>(to), std::memory_order_release);
    futex_call(&g_turn, FUTEX_WAKE_PRIVATE, INT_MAX);
}

bool can_go_on(const Member& m)
{
    if (m.state == State::Runnable) return !m.spinning || m.spun_at != g_progress;
    if (m.state != State::Parked) return false;
    // Ended, and counted by a reply: a wait that ended after the last reply the rank saw
    // is taken up at the next one, in every run.
    return m.wait->state.load(std::memory_order_acquire) == static_cast<uint32_t>(wire::ParkedState::Done) &&
           m.wait->done_number <= g_known_done;
}

// The next member after `me`, in creation order and round, that can go on (`me` last).
int next_after(int me)
{
    for (int step = 1; step <= g_count; ++step) {
        int candidate = (me + step) % g_count;
        if (can_go_on(g_members[candidate])) return candidate;
    }
    return -1;
}

// A member other than `me` was taken off the turn while it spun and has not run since.
bool others_spin(int me)
{
    for (int i = 0; i < g_count; ++i)
        if (i != me && g_members[i].state == State::Runnable && g_members[i].spinning) return true;
    return false;
}

// Nothing can go on: timed waits on condition variables time out first, then the rank
// waits in the simulation for one of its Portals waits to end.
void wait_for_any()
{
    bool spinning = false;
    for (int i = 0; i < g_count; ++i) spinning |= g_members[i].state == State::Runnable && g_members[i].spinning;
    bool timed_out = false;
    for (int i = 0; i < g_count; ++i) {
        Member& m = g_members[i];
        if ((m.state == State::OnCond || m.state == State::OnFutex || m.state == State::OnRelease) && m.timed) {
            m.state = State::Runnable;
            timed_out = true;
        }
    }
    if (timed_out) return;
    bool parked = false;
    for (int i = 0; i < g_count; ++i) parked |= g_members[i].state == State::Parked;
    if (!parked && !spinning)
        fail("deadlock: every thread of the rank waits for another (a mutex, a condition variable, a barrier, a "
             "semaphore, a join or the OpenMP runtime), and none is in a Portals wait that could end it");
    wire::LockstepIdleArgs args{g_known_done, spinning ? 1u : 0u, 0, g_known_writes};
    g_idle.store(true, std::memory_order_release);
    call(wire::Op::LockstepIdle, &args, sizeof args);  // a lockstep request: call() learns its reply
    g_idle.store(false, std::memory_order_release);
    progressed();  // a write may have landed: the spinning threads look again
}

// `me` (with the turn) cannot go on, or yields: the turn goes to the next member that can,
// and `me` waits until it has the turn again. With `leaving`, `me` does not wait.
void pass_turn(int me, bool leaving = false, bool spun = false)
{
    // A thread that blocks, yields or ends may have changed what the others wait for.
    if (!spun) progressed();
    while (true) {
        if (g_foreign_releases.exchange(false, std::memory_order_acq_rel))
            for (int i = 0; i < g_count; ++i)
                if (g_members[i].state == State::OnRelease) g_members[i].state = State::Runnable;
        int next = next_after(me);
        if (next < 0 && spun && me == 0 && g_idle_spins < kIdleSpins && !others_spin(me)) {
            ++g_idle_spins;
            next = me;
        }
        if (next < 0) {
            wait_for_any();
            continue;
        }
        if (next != me) {
            hand_turn(next);
            if (leaving) return;
            take_turn(me);
        }
        g_members[me].state = State::Runnable;
        if (!spun) g_members[me].spinning = false;
        return;
    }
}

// The simulated thread alone is left: the lockstep ends.
void end_if_alone()
{
    if (t_lockstep_index != 0) return;
    for (int i = 1; i < g_count; ++i)
        if (g_members[i].state != State::Exited) return;
    g_count = 0;
    t_lockstep_index = -1;
    g_lockstep_running.store(false, std::memory_order_release);
    // The server holds simulated time for the rank until it hears of the end: a request of
    // the simulated thread's own, at no simulated cost.
    simulated_yield();
}

// The program's own threads, started at code of the executable. Not a library's (a
// runtime's progress thread, which sleeps in the kernel for good), but for the OpenMP
// runtime's workers, whose sleeps the lockstep takes over (threads/openmp_futex.hpp).
bool program_thread(void* (*start)(void*))
{
    Dl_info start_info{}, entry_info{};
    void* entry = reinterpret_cast<void*>(getauxval(AT_ENTRY));
    if (!dladdr(reinterpret_cast<void*>(start), &start_info) || !dladdr(entry, &entry_info)) return false;
    return start_info.dli_fbase == entry_info.dli_fbase;
}

struct Trampoline {
    void* (*start)(void*);
    void* argument;
    int index;
};

void* run_member(void* raw)
{
    Trampoline trampoline = *static_cast<Trampoline*>(raw);
    std::free(raw);
    t_lockstep_index = trampoline.index;
    take_turn(t_lockstep_index);
    g_members[t_lockstep_index].tid = static_cast<pid_t>(syscall(SYS_gettid));
    pthread_getcpuclockid(pthread_self(), &g_members[t_lockstep_index].cpu_clock);
    void* result = trampoline.start(trampoline.argument);
    thread_exits();
    return result;
}

// The watchdog took this thread off the turn: it spins (on memory another thread or a
// remote write is to change, or on a lock a thread without the turn holds). Within a call
// or this file's code it goes on; the watchdog asks again.
// Takes the calling thread off the turn: it spins (on memory another thread or a remote
// write is to change, or on a lock a thread without the turn holds).
void preempt_now()
{
    int saved_errno = errno;
    t_in_lockstep = true;
    Member& me = g_members[t_lockstep_index];
    // Its first time off since it last called or blocked: it may have written what another
    // spinning thread waits for before it began to spin.
    if (!me.spinning) ++g_progress;
    me.budgets_holding = 0;
    me.spinning = true;
    me.spun_at = g_progress;
    pass_turn(t_lockstep_index, false, true);
    t_in_lockstep = false;
    errno = saved_errno;
}

// Asked for in the interposer's code (a call, a mutex of the program's): done on the way
// out, unless the thread called or handed the turn meanwhile (the epoch moved).
thread_local __attribute__((tls_model("initial-exec"))) uint64_t t_preempt_epoch = 0;
thread_local __attribute__((tls_model("initial-exec"))) bool t_preempt_pending = false;

// The interrupted thread was in a system call: the kernel delivers a signal as the call
// returns (the next instruction follows the `syscall`), or before it restarts an
// interrupted one (the `syscall` itself, again).
bool in_system_call(const void* context)
{
#if defined(__x86_64__)
    const auto* uc = static_cast<const ucontext_t*>(context);
    const auto* pc = reinterpret_cast<const unsigned char*>(uc->uc_mcontext.gregs[REG_RIP]);
    const uintptr_t in_page = reinterpret_cast<uintptr_t>(pc) & 4095;  // never read across a page
    auto is_syscall = [](const unsigned char* at) { return at[0] == 0x0f && at[1] == 0x05; };
    return (in_page >= 2 && is_syscall(pc - 2)) || (in_page <= 4094 && is_syscall(pc));
#else
    (void)context;
    return false;
#endif
}

void on_preempt_signal(int, siginfo_t* info, void* context)
{
    if (t_lockstep_index >= 0) __atomic_add_fetch(&g_members[t_lockstep_index].signals_taken, 1, __ATOMIC_RELEASE);
    // A signal sent for an earlier turn (queued while the handler ran) is not about this one.
    uint64_t epoch = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
    if (info->si_code != SI_QUEUE || epoch != g_epoch.load(std::memory_order_acquire)) return;
    if (t_lockstep_index < 0 || !g_lockstep_running.load(std::memory_order_relaxed)) return;
    if (static_cast<int>(g_turn.load(std::memory_order_acquire)) != t_lockstep_index) return;
    Member& me = g_members[t_lockstep_index];
    // The CPU time that spent the budget may not have been the thread's own. A virtual CPU
    // the host does not run still counts time for the thread it was running: the signal then
    // waits for it to run again (on the 2-core test machine, under load, 2 ms of such "CPU
    // time" took a thread that computed 20 us between its calls for a spinner, in some runs).
    // And a spin on memory makes no system call: a budget spent in one went to the kernel's
    // work for the thread (there, a single reading of its CPU clock was charged up to a
    // millisecond). In the interposer's own code, never a spin; in the program's, up to
    // kBudgetsInKernel budgets in a turn.
    if (host_monotonic_ns() - __atomic_load_n(&me.signal_sent_ns, __ATOMIC_ACQUIRE) > kLateSignalNs) return;
    if (in_system_call(context)) {
        if (me.kernel_epoch != epoch) {
            me.kernel_epoch = epoch;
            me.budgets_in_kernel = 0;
        }
        if (t_in_lockstep || in_call() || ++me.budgets_in_kernel <= kBudgetsInKernel) return;
    }
    // The second budget in the same turn, wherever the first was spent. A thread that
    // computes between two calls has made the next one by then, unless the host charged it a
    // budget it did not spend: it was taken for a spinner at the very end of a 20 us
    // computation, the signal taken as it entered its next call (about one run in twenty
    // under load), and, in the interposer's code or holding a mutex, after a few
    // microseconds of work with the turn (lockstep_threads.c: 200 us of "CPU time" in a loop
    // over its 5 threads, one run in forty on an idle host). A spinner loses the turn one
    // budget later.
    if (me.armed_epoch != epoch) {
        me.armed_epoch = epoch;
        return;
    }
    // Within the interposer's code, or holding a mutex (for a few budgets at most: a thread
    // may spin holding one): at the end of that code or at the unlock.
    bool holding = me.mutexes_held > 0 && me.budgets_holding++ < kBudgetsHolding;
    if (t_in_lockstep || in_call() || holding) {
        t_preempt_pending = true;
        t_preempt_epoch = epoch;
        return;
    }
    preempt_now();
}

// The end of an outermost shielded region: a preemption asked for within it is done now.
void leave_shield()
{
    t_in_lockstep = false;
    if (!t_preempt_pending) return;
    t_preempt_pending = false;
    if (t_lockstep_index < 0 || t_preempt_epoch != g_epoch.load(std::memory_order_acquire)) return;
    if (static_cast<int>(g_turn.load(std::memory_order_acquire)) != t_lockstep_index) return;
    Member& me = g_members[t_lockstep_index];
    if (me.mutexes_held > 0 && me.budgets_holding < kBudgetsHolding) {
        t_preempt_pending = true;  // at the unlock
        return;
    }
    preempt_now();
}

// The text of /proc/self/task/TID/stat into `text`; false if it could not be read. With
// open and read, not read_thread_file's stdio: no allocation in the watchdog.
bool read_stat(pid_t tid, char (&text)[512])
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return false;
    text[n] = '\0';
    return true;
}

bool asleep(pid_t tid)
{
    char text[512];
    const char* fields = read_stat(tid, text) ? stat_after_name(text) : nullptr;
    return fields && sleeps_on_others(fields[1]);
}

// The thread's page faults, or UINT64_MAX if unknown.
uint64_t page_faults(pid_t tid)
{
    char text[512];
    unsigned long long faults = 0;
    return read_stat(tid, text) && stat_page_faults(text, faults) ? faults : UINT64_MAX;
}

int64_t cpu_ns(clockid_t clock)
{
    timespec ts{};
    if (syscall(SYS_clock_gettime, clock, &ts) != 0) return -1;
    return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Takes the turn from a thread that has used kSpinBudgetNs of CPU time since it got it or
// since its last reply. CPU time, not wall time: a thread the host merely descheduled is
// not taken off, so where the turn goes does not depend on the host's load.
void* watch(void*)
{
    uint64_t epoch_seen = ~0ull;
    int holder_seen = -1;
    int64_t base = 0, last_used = -1;
    int still_looks = 0;
    uint64_t fault_mark = UINT64_MAX;
    while (g_lockstep_running.load(std::memory_order_acquire)) {
        timespec period{0, kWatchdogPeriodNs};
        untrapped_nanosleep(&period, nullptr);  // a real sleep, not one the server answers
        // First: while the rank waits in the simulation, nothing is read (no clock, no
        // /proc) every period for nothing.
        if (g_idle.load(std::memory_order_acquire)) {
            epoch_seen = ~0ull;  // the next look starts a budget
            continue;
        }
        uint64_t epoch = g_epoch.load(std::memory_order_acquire);
        int holder = static_cast<int>(g_turn.load(std::memory_order_acquire));
        if (holder < 0 || holder >= g_count || g_members[holder].tid == 0) continue;
        int64_t used = cpu_ns(g_members[holder].cpu_clock);
        if (used < 0) continue;
        // The holder too: hand_turn moves the epoch before the turn, and a look between the
        // two took the old holder's CPU clock for the base of the new holder's budget. The
        // new holder's clock, which may read more by far, then spent a budget at once: a
        // thread that had just got the turn could be taken for a spinner when a loaded host
        // descheduled the thread handing it over between the two stores (a worker of
        // joined_threads --lockstep on was, between two of its waits, in 2 runs of 16
        // beside a CPU hog; in none of 16 with this check).
        if (epoch != epoch_seen || holder != holder_seen) {
            epoch_seen = epoch;
            holder_seen = holder;
            base = last_used = used;
            still_looks = 0;
            fault_mark = page_faults(g_members[holder].tid);
            continue;
        }
        // Asleep in the kernel with the turn (a lock of libc's that a thread taken off the
        // turn holds): the turn goes on too.
        if (used == last_used) {
            if (++still_looks < kAsleepLooks || !asleep(g_members[holder].tid)) continue;
        } else {
            last_used = used;
            still_looks = 0;
            if (used - base < kSpinBudgetNs) continue;
            // A budget spent taking page faults went to computing (a thread's first steps:
            // its stack, its TLS, a malloc arena), not to spinning on memory, which takes
            // none: the budget starts again. Taken off there, a new thread lost the turn in
            // one run and reached its first lock in another (SOS's mt_lock_test).
            uint64_t faults = page_faults(g_members[holder].tid);
            if (faults != fault_mark) {
                fault_mark = faults;
                base = used;
                continue;
            }
        }
        // One signal at a time. A thread that has not taken the last one has not run since:
        // its budget starts again once it has (its handler judged that signal late).
        Member& member = g_members[holder];
        if (__atomic_load_n(&member.signals_taken, __ATOMIC_ACQUIRE) != member.signals_sent) {
            if (host_monotonic_ns() - member.signal_sent_ns > kSignalLostNs)
                member.signals_sent = __atomic_load_n(&member.signals_taken, __ATOMIC_ACQUIRE);
            base = used;
            continue;
        }
        siginfo_t signal_info{};
        signal_info.si_signo = kPreemptSignal;
        signal_info.si_code = SI_QUEUE;
        signal_info.si_pid = getpid();
        signal_info.si_uid = getuid();
        signal_info.si_value.sival_ptr = reinterpret_cast<void*>(epoch);
        __atomic_store_n(&member.signal_sent_ns, host_monotonic_ns(), __ATOMIC_RELEASE);
        ++member.signals_sent;
        syscall(SYS_rt_tgsigqueueinfo, getpid(), member.tid, kPreemptSignal, &signal_info);
        base = used;  // asked once per budget
        still_looks = 0;
    }
    return nullptr;
}

// A child of the rank (fork) is no rank: its one thread runs free.
void leave_in_child()
{
    g_lockstep_running.store(false, std::memory_order_relaxed);
    t_lockstep_index = -1;
    g_count = 0;
}

void start_watchdog()
{
    static bool installed = false;
    if (!installed) {
        installed = true;
        pthread_atfork(nullptr, nullptr, leave_in_child);
        struct sigaction action{};
        action.sa_sigaction = on_preempt_signal;
        action.sa_flags = SA_RESTART | SA_SIGINFO;
        sigemptyset(&action.sa_mask);
        sigaction(kPreemptSignal, &action, nullptr);
    }
    pthread_t thread;
    create_own_thread(&thread, nullptr, watch, nullptr);
    pthread_detach(thread);
}

// The calling thread waits on `object` (a condition variable, a futex word) until a thread
// wakes it (wake_waiters) or, timed, until no thread of the rank can go on; true if woken.
bool wait_on(State state, const void* object, bool timed)
{
    Member& me = g_members[t_lockstep_index];
    me.state = state;
    me.object = object;
    me.timed = timed;
    me.signalled = false;
    pass_turn(t_lockstep_index);
    bool woken = me.signalled || !timed;
    me.timed = false;
    return woken;
}

// Wakes the first `count` threads waiting on `object` after the calling thread, in the
// rank's order; returns how many it woke.
int wake_waiters(State state, const void* object, int count)
{
    int woken = 0;
    for (int step = 1; step <= g_count && woken < count; ++step) {
        Member& m = g_members[(t_lockstep_index + step) % g_count];
        if (m.state != state || m.object != object) continue;
        m.state = State::Runnable;
        m.signalled = true;
        ++woken;
    }
    return woken;
}

// Public entry points run shielded from the watchdog's signal.
struct Guard {
    bool outer = !t_in_lockstep;
    Guard() { t_in_lockstep = true; }
    ~Guard()
    {
        if (outer) leave_shield();
    }
};

}  // namespace

Shield::Shield() : outer_(!t_in_lockstep)
{
    t_in_lockstep = true;
}

Shield::~Shield()
{
    if (outer_) leave_shield();
}

bool shielded()
{
    return t_in_lockstep;
}

bool shield_request()
{
    const bool outer = !t_in_lockstep;
    t_in_lockstep = true;
    return outer;
}

void unshield_request(bool outer)
{
    if (outer) leave_shield();
}

Start before_create(void* (*start)(void*), void* argument)
{
    Guard guard;
    Start plain{start, argument, -1};
    if (!is_rank() || !threads_lockstep()) return plain;
    if (!on_lockstep_thread() && !on_simulated_thread()) return plain;
    // An OpenMP runtime's worker joins too, once its futex calls are the lockstep's.
    if (!program_thread(start) && !openmp_futex::runtime_thread(start)) return plain;
    if (!on_lockstep_thread()) {
        g_count = 1;
        g_members[0] = Member{};
        g_members[0].state = State::Runnable;
        g_members[0].tid = static_cast<pid_t>(syscall(SYS_gettid));
        pthread_getcpuclockid(pthread_self(), &g_members[0].cpu_clock);
        t_lockstep_index = 0;
        g_turn.store(0, std::memory_order_release);
        g_lockstep_running.store(true, std::memory_order_release);
        start_watchdog();
        // The server holds simulated time for a rank in lockstep from its first lockstep
        // request: made now, before the first thread exists. Otherwise the simulated thread,
        // in pthread_join while a new thread was slow to start on a loaded host (20 ms), was
        // taken for blocked outside and simulated time ran on without the rank: another date
        // in about one run in twelve beside two CPU hogs (joined_threads, --lockstep on).
        simulated_yield();
    }
    if (g_count == kMaxMembers) fail("not supported yet: more than 1024 threads in lockstep in one rank");
    auto* trampoline = static_cast<Trampoline*>(std::malloc(sizeof(Trampoline)));
    if (!trampoline) return plain;
    int index = g_count++;
    g_members[index] = Member{};
    g_members[index].state = State::Runnable;
    *trampoline = Trampoline{start, argument, index};
    return Start{run_member, trampoline, index};
}

void after_create(const Start& start, int rc, pthread_t thread)
{
    Guard guard;
    if (start.index < 0) return;
    if (rc != 0) {
        std::free(start.argument);
        g_members[start.index].state = State::Exited;
        end_if_alone();
        return;
    }
    g_members[start.index].thread = thread;
}

void learn(const wire::Reply& reply, wire::Slot& slot)
{
    uint64_t bits;
    std::memcpy(&bits, &reply.sim_time, sizeof bits);
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_relaxed);
    if (reply.lockstep_done > g_known_done) g_known_done = reply.lockstep_done;
    if (reply.memory_writes > g_known_writes) g_known_writes = reply.memory_writes;
    progressed();
    if (t_lockstep_index >= 0) g_members[t_lockstep_index].spinning = false;
    g_epoch.fetch_add(1, std::memory_order_relaxed);
}

void wait_parked(wire::ParkedWait& wait)
{
    Guard guard;
    Member& me = g_members[t_lockstep_index];
    me.state = State::Parked;
    me.wait = &wait;
    pass_turn(t_lockstep_index);
    me.wait = nullptr;
}

int mutex_lock(pthread_mutex_t* mutex)
{
    Guard guard;
    Member& me = g_members[t_lockstep_index];
    while (true) {
        int rc = s4bxi_libc_mutex_trylock(mutex);
        if (rc == 0) ++me.mutexes_held;
        if (rc != EBUSY) return rc;
        me.state = State::OnMutex;
        me.object = mutex;
        pass_turn(t_lockstep_index);
    }
}

void mutex_taken()
{
    ++g_members[t_lockstep_index].mutexes_held;
}

void mutex_unlocked(pthread_mutex_t* mutex)
{
    Guard guard;
    Member& me = g_members[t_lockstep_index];
    if (me.mutexes_held > 0 && --me.mutexes_held == 0) me.budgets_holding = 0;
    for (int i = 0; i < g_count; ++i)
        if (g_members[i].state == State::OnMutex && g_members[i].object == mutex) {
            g_members[i].state = State::Runnable;
            progressed();
        }
}

int cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex, bool timed)
{
    Guard guard;
    s4bxi_libc_mutex_unlock(mutex);
    mutex_unlocked(mutex);
    bool signalled = wait_on(State::OnCond, cond, timed);
    int rc = mutex_lock(mutex);
    if (rc != 0) return rc;
    return signalled ? 0 : ETIMEDOUT;
}

void cond_signalled(pthread_cond_t* cond, bool all)
{
    Guard guard;
    wake_waiters(State::OnCond, cond, all ? g_count : 1);
}

int barrier_wait(pthread_barrier_t* barrier, unsigned count, unsigned& arrived)
{
    Guard guard;
    if (++arrived == count) {
        arrived = 0;
        for (int i = 0; i < g_count; ++i)
            if (g_members[i].state == State::OnBarrier && g_members[i].object == barrier)
                g_members[i].state = State::Runnable;
        return PTHREAD_BARRIER_SERIAL_THREAD;
    }
    Member& me = g_members[t_lockstep_index];
    me.state = State::OnBarrier;
    me.object = barrier;
    pass_turn(t_lockstep_index);
    return 0;
}

int join(pthread_t thread, void** result)
{
    Guard guard;
    using Join = int (*)(pthread_t, void**);
    static const auto real_join = reinterpret_cast<Join>(dlsym(RTLD_NEXT, "pthread_join"));
    for (int i = 1; i < g_count; ++i) {
        if (g_members[i].state == State::Free || !pthread_equal(g_members[i].thread, thread)) continue;
        Member& me = g_members[t_lockstep_index];
        while (g_members[i].state != State::Exited) {
            me.state = State::OnJoin;
            me.target = i;
            pass_turn(t_lockstep_index);
        }
        // Ended for the lockstep; the kernel thread is on its way out. Forget it, so that a
        // later thread with the same pthread_t is not taken for it.
        g_members[i].thread = pthread_t{};
        break;
    }
    int rc = real_join(thread, result);
    end_if_alone();
    return rc;
}

long futex_wait(const uint32_t* word, uint32_t expected, bool timed)
{
    Guard guard;
    // The threads in lockstep run one at a time: no other can change the word meanwhile.
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected) return -EAGAIN;
    return wait_on(State::OnFutex, word, timed) ? 0 : -ETIMEDOUT;
}

int futex_wake(const uint32_t* word, int count)
{
    Guard guard;
    return wake_waiters(State::OnFutex, word, count);
}

int take_when_released(void* object, bool timed, int (*try_take)(void*))
{
    Guard guard;
    while (true) {
        int rc = try_take(object);
        if (rc != EAGAIN && rc != EBUSY) return rc;
        if (!wait_on(State::OnRelease, object, timed)) return ETIMEDOUT;
    }
}

void released(const void* object)
{
    bool holder = on_lockstep_thread() && !t_in_lockstep &&
                  static_cast<int>(g_turn.load(std::memory_order_acquire)) == t_lockstep_index;
    if (!holder) {
        g_foreign_releases.store(true, std::memory_order_release);
        return;
    }
    Guard guard;
    // Every waiter tries again, in the rank's order: the first takes what it can.
    if (wake_waiters(State::OnRelease, object, g_count) > 0) progressed();
}

void yield()
{
    Guard guard;
    pass_turn(t_lockstep_index);
}

void thread_exits()
{
    Guard guard;
    if (!on_lockstep_thread() || t_lockstep_index == 0) return;
    int me = t_lockstep_index;
    g_members[me].state = State::Exited;
    for (int i = 0; i < g_count; ++i)
        if (g_members[i].state == State::OnJoin && g_members[i].target == me) g_members[i].state = State::Runnable;
    pass_turn(me, true);  // a request it makes on the way is still a lockstep one
    t_lockstep_index = -1;
}

}  // namespace s4bxi::interpose::lockstep
