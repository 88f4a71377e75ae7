// The turn: who of the rank's threads in lockstep may run, who is next (creation order),
// and the rank waiting in the simulation when no thread can go on (docs/time.md "Threads
// in lockstep").
#include "threads/lockstep.hpp"

#include <dlfcn.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "threads/lockstep_members.hpp"
#include "threads/openmp_futex.hpp"

namespace s4bxi::interpose::lockstep {

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
void pass_turn(int me, bool leaving, bool spun)
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
        // in pthread_join while a new thread is slow to start on a loaded host, is taken for
        // blocked outside and simulated time runs on without the rank (test: joined_threads
        // under --lockstep on, beside CPU hogs).
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

}  // namespace s4bxi::interpose::lockstep
