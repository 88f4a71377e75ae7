// The lockstep's watchdog: takes the turn from a thread that spins on memory (CPU time
// spent with no call), by a signal the thread takes outside the interposer's code.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>

#include "rank/rank_state.hpp"
#include "s4bxi/thread_state.hpp"
#include "threads/lockstep.hpp"
#include "threads/lockstep_members.hpp"
#include "time/seccomp_filter.hpp"

namespace s4bxi::interpose::lockstep {

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
    // budget it did not spend: at the very end of a short computation, the signal taken as
    // it entered its next call, or, in the interposer's code or holding a mutex, after a few
    // microseconds of work with the turn (test: lockstep_threads.c, whose 5 threads loop
    // on short computations). A spinner loses the turn one budget later.
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

}  // namespace s4bxi::interpose::lockstep
