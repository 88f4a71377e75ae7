#include "services/seccomp_supervisor.hpp"

#include <errno.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>

#include "host/thread_cpu_clock.hpp"
#include "s4bxi/slot_futex.hpp"
#include "s4bxi/time_math.hpp"

#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

namespace s4bxi::sim {

using namespace s4bxi::timemath;

namespace {

int64_t host_monotonic_ns()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_to_ns(ts);
}

struct Notif {
    seccomp_notif* req = nullptr;
    seccomp_notif_resp* resp = nullptr;
    Notif() { seccomp_notify_alloc(&req, &resp); }
    ~Notif() { seccomp_notify_free(req, resp); }
    explicit operator bool() const { return req && resp; }
};

void respond(int fd, seccomp_notif_resp* resp, uint64_t id, int64_t value, int error, bool let_through)
{
    memset(resp, 0, sizeof *resp);
    resp->id = id;
    if (let_through) {
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    } else {
        resp->val = error ? -1 : value;
        resp->error = error ? -error : 0;
    }
    // ENOENT: the task was interrupted or died meanwhile; nothing to answer.
    seccomp_notify_respond(fd, resp);
}

}  // namespace

struct SeccompSupervisor::Entry {
    int rank = -1;
    const ProcessAccess* machine = nullptr;  // how the server reaches the rank's process
    pid_t pid = 0;
    pid_t tid = 0;
    int fd = -1;
    wire::Slot* slot = nullptr;
    wire::Doorbell* doorbell = nullptr;
    double cpu_factor = 1.0;
    bool zero_cpu_model = false;
    double epoch = 0.0;
    ThreadCpuClock cpu_clock;  // of the simulated thread
    ProcessThreads threads;  // which thread ids belong to the rank
    bool hung_up = false;  // no process uses the filter any more (poller only)
    bool retired = false;  // removed and its sleep worker joined (under the supervisor's mutex)

    // `attached` (serve the simulated thread) and every use of slot/doorbell by the
    // poller happen under this mutex; remove_rank clears it under the same mutex.
    std::mutex mutex;
    bool attached = true;

    // Sleep worker: one pending sleep at most in practice (the simulated thread is blocked
    // in it), a queue for the odd restarted syscall.
    struct Sleep {
        uint64_t id;
        double seconds;
        // Not a sleep: a clock read of the simulated thread (or an absolute sleep, which
        // reads the clock), kept until the server has served the commands the rank posted
        // without waiting (wire::PostedCommand), then served as it came.
        bool after_posted = false;
        seccomp_notif request{};
    };
    std::thread worker;
    std::condition_variable cv;
    std::deque<Sleep> sleeps;  // under mutex
    std::atomic<bool> stop{false};

    uint64_t cpu_now() const { return cpu_clock.now_ns(); }

    // The simulated thread's clock, read as the rank reads it; like the rank, the reading
    // is where the rank's other threads continue from (threads_clock_offset).
    double now() const
    {
        double sim = slot->sim_time_at_reply();
        int64_t host = host_monotonic_ns();
        uint64_t frozen = slot->cpu_frozen_ns.load(std::memory_order_acquire);
        double value = virtual_clock(sim, slot->cpu_at_reply_ns.load(std::memory_order_acquire),
                                     zero_cpu_model ? 0 : cpu_now(), frozen, cpu_factor, zero_cpu_model);
        slot->threads_clock_offset_ns.store(threads_clock_offset(seconds_to_ns(value), host),
                                            std::memory_order_release);
        return value;
    }

    // The rank's clock as its other threads see it, in ns of simulated time.
    int64_t other_thread_now_ns() const
    {
        return other_thread_virtual_ns(host_monotonic_ns(), slot->threads_clock_offset_ns.load(std::memory_order_acquire));
    }

    // A thread of the rank's process (not a descendant's).
    bool is_rank_thread(pid_t thread) const { return threads.contains(thread); }

    void close_fds()
    {
        if (fd >= 0) {
            close(fd);
            fd = -1;
        }
        threads = ProcessThreads{};
    }
};

namespace {

using Entry = SeccompSupervisor::Entry;

// Posts a Sleep request into the slot (claimed by the caller) as the rank's call() would, waits for the reply,
// then hands the slot back to the rank (Idle, clock fields updated). Returns false if the
// rank was removed meanwhile.
bool simulated_sleep(Entry& e, double seconds)
{
    wire::Slot& slot = *e.slot;
    wire::Request& request = slot.request;
    uint64_t frozen = slot.cpu_frozen_ns.load(std::memory_order_acquire);
    uint64_t cpu_now = charged_cpu_ns(e.cpu_now(), frozen);
    uint64_t cpu_at_reply = slot.cpu_at_reply_ns.load(std::memory_order_acquire);
    request.op = static_cast<uint32_t>(wire::Op::Sleep);
    request.seq = request.seq + 1;
    request.cpu_ns = cpu_now > cpu_at_reply ? cpu_now - cpu_at_reply : 0;
    request.other_thread = 0;  // the trapped system call is the simulated thread's
    request.parked_record = 0;  // a sleep is never parked
    wire::SleepArgs args{seconds};
    memcpy(request.args, &args, sizeof args);
    slot.state.store(static_cast<uint32_t>(wire::SlotState::Posted), std::memory_order_release);
    ring_doorbell(*e.doorbell);

    const uint32_t posted = static_cast<uint32_t>(wire::SlotState::Posted);
    while (slot.state.load(std::memory_order_acquire) == posted) {
        if (e.stop.load()) return false;
        timespec timeout{0, 100'000'000};
        sleep_on_slot_state(slot, posted, &timeout);
    }
    double sim_time = slot.reply.sim_time;
    uint64_t bits;
    memcpy(&bits, &sim_time, sizeof bits);
    slot.sim_time_at_reply_bits.store(bits, std::memory_order_release);
    uint64_t cpu_after = e.cpu_now();
    slot.cpu_at_reply_ns.store(cpu_after, std::memory_order_release);
    // A sleep in the MPI library's code: its clock stays frozen, from this reply on.
    if (frozen) slot.cpu_frozen_ns.store(cpu_after, std::memory_order_release);
    slot.threads_clock_offset_ns.store(threads_clock_offset(seconds_to_ns(sim_time), host_monotonic_ns()),
                                       std::memory_order_release);
    slot.state.store(static_cast<uint32_t>(wire::SlotState::Idle), std::memory_order_release);
    futex(&slot.state, FUTEX_WAKE, INT_MAX, nullptr);  // a thread of the rank may wait to claim it
    return true;
}

// Commands the rank posted without waiting that the server has not served yet: the
// simulated thread's clock stands as after the last of them only once they are.
bool posted_pending(const wire::Slot& slot)
{
    return slot.posted_served.load(std::memory_order_acquire) != slot.posted_head.load(std::memory_order_acquire);
}

// The system calls whose answer depends on the simulated thread's clock.
bool reads_clock(const seccomp_notif& req)
{
    const __u64* args = req.data.args;
    switch (req.data.nr) {
    case SYS_clock_gettime: return is_virtual_clock(static_cast<clockid_t>(static_cast<int32_t>(args[0])));
    case SYS_gettimeofday:
    case SYS_time: return true;
    case SYS_clock_nanosleep: return static_cast<int>(args[1]) & TIMER_ABSTIME;
    default: return false;
    }
}

}  // namespace

void SeccompSupervisor::worker_loop(Entry& entry)
{
    Entry* e = &entry;
    std::atomic<uint64_t>* sleeps_counter = &sleeps_;
    Notif notif;
    if (!notif) return;
    std::unique_lock lock(e->mutex);
    while (true) {
        e->cv.wait(lock, [&] { return e->stop.load() || !e->sleeps.empty(); });
        if (e->sleeps.empty()) return;  // stopping with nothing pending
        Entry::Sleep sleep = e->sleeps.front();
        e->sleeps.pop_front();
        if (sleep.after_posted) {
            // The gate serves them whatever the rank does; the thread is blocked in its
            // system call meanwhile, and a rank that dies takes the notification with it.
            lock.unlock();
            while (posted_pending(*e->slot) && !e->stop.load() && seccomp_notify_id_valid(e->fd, sleep.id) == 0) {
                timespec pause{0, 20'000};
                nanosleep(&pause, nullptr);
            }
            lock.lock();
            if (e->stop.load() || !e->attached) {
                respond(e->fd, notif.resp, sleep.id, 0, 0, true);
                continue;
            }
            serve(*e, sleep.request, lock);
            continue;
        }
        bool slept = false;
        if (!e->stop.load() && e->attached) {
            // The slot is free only while no thread of the rank is inside call() (a
            // signal handler may make a direct syscall in the middle of one, another
            // thread may be waiting in one): otherwise sleep for real.
            uint32_t idle = static_cast<uint32_t>(wire::SlotState::Idle);
            if (!e->slot->state.compare_exchange_strong(idle, static_cast<uint32_t>(wire::SlotState::Claimed),
                                                        std::memory_order_acquire)) {
                respond(e->fd, notif.resp, sleep.id, 0, 0, true);
                continue;
            }
            lock.unlock();  // remove_rank must be able to stop us while we wait
            slept = simulated_sleep(*e, sleep.seconds);
            lock.lock();
            if (slept) sleeps_counter->fetch_add(1);
        }
        // Removed while pending (end of run): release the rank rather than hold it.
        respond(e->fd, notif.resp, sleep.id, 0, 0, false);
    }
}


SeccompSupervisor::SeccompSupervisor()
{
    wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    poller_ = std::thread([this] { poll_loop(); });
}

SeccompSupervisor::~SeccompSupervisor()
{
    stopping_.store(true);
    wake_poller();
    if (poller_.joinable()) poller_.join();
    std::vector<std::shared_ptr<Entry>> entries;
    {
        std::lock_guard lock(mutex_);
        entries.swap(entries_);
    }
    for (auto& e : entries) {
        {
            std::lock_guard lock(e->mutex);
            e->attached = false;
            e->stop.store(true);
        }
        e->cv.notify_all();
        if (e->slot) futex(&e->slot->state, FUTEX_WAKE, INT_MAX, nullptr);
        if (e->worker.joinable()) e->worker.join();
        e->close_fds();
    }
    if (wake_fd_ >= 0) close(wake_fd_);
}

void SeccompSupervisor::wake_poller()
{
    uint64_t one = 1;
    if (wake_fd_ >= 0) (void)!write(wake_fd_, &one, sizeof one);
}

void SeccompSupervisor::add_rank(int rank, const ProcessAccess& machine, pid_t pid, pid_t tid, int listener_fd,
                                 wire::Slot* slot, wire::Doorbell* doorbell, double cpu_factor, bool zero_cpu_model,
                                 double epoch)
{
    if (listener_fd < 0) return;
    auto e = std::make_shared<Entry>();
    e->rank = rank;
    e->machine = &machine;
    e->pid = pid;
    e->tid = tid;
    e->fd = listener_fd;
    e->slot = slot;
    e->doorbell = doorbell;
    e->cpu_factor = cpu_factor;
    e->zero_cpu_model = zero_cpu_model;
    e->epoch = epoch;
    e->cpu_clock = machine.thread_cpu_clock(pid, tid);
    e->threads = machine.process_threads(pid);
    {
        std::lock_guard lock(mutex_);
        entries_.push_back(std::move(e));
        ++generation_;
    }
    wake_poller();
}

void SeccompSupervisor::remove_rank(int rank)
{
    std::shared_ptr<Entry> e;
    {
        std::lock_guard lock(mutex_);
        for (auto& candidate : entries_)
            if (candidate->rank == rank && candidate->attached) e = candidate;
    }
    if (!e) return;
    {
        std::lock_guard lock(e->mutex);
        e->attached = false;
        e->stop.store(true);
    }
    e->cv.notify_all();
    futex(&e->slot->state, FUTEX_WAKE, INT_MAX, nullptr);
    if (e->worker.joinable()) e->worker.join();
    // From here the listener only lets syscalls through; the poller closes it on hang-up.
    {
        std::lock_guard lock(mutex_);
        e->retired = true;
    }
    wake_poller();
}

SeccompSupervisor::Stats SeccompSupervisor::stats() const
{
    return Stats{served_.load(), sleeps_.load(), continued_.load(), errors_.load()};
}

void SeccompSupervisor::poll_loop()
{
    std::vector<std::shared_ptr<Entry>> polled;
    std::vector<pollfd> fds;
    uint64_t seen_generation = ~0ull;
    bool rebuild = true;
    while (!stopping_.load()) {
        {
            std::lock_guard lock(mutex_);
            // Detached listeners nobody uses any more are closed here, by the only thread
            // that polls them.
            for (auto it = entries_.begin(); it != entries_.end();) {
                std::shared_ptr<Entry>& e = *it;
                if (e->hung_up && e->retired) {
                    e->close_fds();
                    it = entries_.erase(it);
                    ++generation_;
                } else {
                    ++it;
                }
            }
            if (rebuild || seen_generation != generation_) {
                polled.clear();
                for (auto& e : entries_)
                    if (!e->hung_up) polled.push_back(e);
                seen_generation = generation_;
                rebuild = false;
            }
        }
        fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
        for (auto& e : polled) fds.push_back(pollfd{e->fd, POLLIN, 0});
        int ready = poll(fds.data(), fds.size(), -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            perror("s4bxi-simkernel: seccomp supervisor: poll");
            return;
        }
        if (fds[0].revents & POLLIN) {
            uint64_t count;
            (void)!read(wake_fd_, &count, sizeof count);
        }
        for (size_t i = 1; i < fds.size(); ++i) {
            Entry& e = *polled[i - 1];
            if (fds[i].revents & POLLIN) {
                handle(e);
            } else if (fds[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
                e.hung_up = true;
                rebuild = true;
            }
        }
    }
}

void SeccompSupervisor::handle(Entry& e)
{
    static thread_local Notif notif;
    if (!notif) return;
    memset(notif.req, 0, sizeof *notif.req);
    if (seccomp_notify_receive(e.fd, notif.req) != 0) return;  // vanished (interrupted, killed)
    const seccomp_notif& req = *notif.req;
    auto let_through = [&] {
        continued_.fetch_add(1, std::memory_order_relaxed);
        respond(e.fd, notif.resp, req.id, 0, 0, true);
    };
    std::unique_lock lock(e.mutex);
    if (!e.attached || req.data.arch != AUDIT_ARCH_X86_64) return let_through();
    serve(e, req, lock);
}

void SeccompSupervisor::serve(Entry& e, const seccomp_notif& req, std::unique_lock<std::mutex>& lock)
{
    (void)lock;
    static thread_local Notif notif;
    if (!notif) return;
    auto let_through = [&] {
        continued_.fetch_add(1, std::memory_order_relaxed);
        respond(e.fd, notif.resp, req.id, 0, 0, true);
    };
    auto answer = [&](int64_t value, int error) {
        (error ? errors_ : served_).fetch_add(1, std::memory_order_relaxed);
        respond(e.fd, notif.resp, req.id, value, error, false);
    };

    const pid_t pid = static_cast<pid_t>(req.pid);
    const __u64* args = req.data.args;
    // The rank's memory is touched only while the notification is still live: a dead
    // rank's pid could have been reused. `pid` is the calling thread, whose memory is the
    // rank's (or a descendant's, let through before any is touched).
    auto still_valid = [&] { return seccomp_notify_id_valid(e.fd, req.id) == 0; };
    auto write_remote = [&](uint64_t address, const void* data, size_t size) {
        return e.machine->write_memory(pid, address, data, size);
    };
    auto read_remote = [&](uint64_t address, void* data, size_t size) {
        return e.machine->read_memory(pid, address, data, size);
    };

    // The simulated thread reads the simulated clock. The rank's other threads read it
    // continued in real time, as its interposer shows it to them (docs/time.md); their
    // sleeps are real. Descendants, which inherited the filter, run with real time.
    const bool simulated = pid == e.tid;
    if (!simulated && !e.is_rank_thread(pid)) return let_through();
    // The simulated thread's clock, while commands it posted wait for the server: its
    // worker serves the call once they are served; this thread goes on with the others.
    if (simulated && reads_clock(req) && posted_pending(*e.slot)) {
        e.sleeps.push_back(Entry::Sleep{req.id, 0.0, true, req});
        if (!e.worker.joinable()) e.worker = std::thread([this, entry = &e] { worker_loop(*entry); });
        e.cv.notify_one();
        return;
    }
    auto clock_at = [&](ClockKind kind) {
        return simulated ? clock_value_ns(kind, e.now(), e.epoch)
                         : clock_value_at_ns(kind, e.other_thread_now_ns(), e.epoch);
    };

    switch (req.data.nr) {
    case SYS_clock_gettime: {
        clockid_t clock = static_cast<clockid_t>(static_cast<int32_t>(args[0]));
        if (!is_virtual_clock(clock)) return let_through();
        timespec ts = ns_to_timespec(clock_at(classify_clock(clock)));
        if (!still_valid()) return;
        if (!write_remote(args[1], &ts, sizeof ts)) return answer(0, EFAULT);
        return answer(0, 0);
    }
    case SYS_gettimeofday: {
        int64_t ns = clock_at(ClockKind::Realtime);
        timeval tv{static_cast<time_t>(ns / kNsPerSec), static_cast<suseconds_t>((ns % kNsPerSec) / 1000)};
        struct timezone tz {};
        if (!still_valid()) return;
        if (args[0] && !write_remote(args[0], &tv, sizeof tv)) return answer(0, EFAULT);
        if (args[1] && !write_remote(args[1], &tz, sizeof tz)) return answer(0, EFAULT);
        return answer(0, 0);
    }
    case SYS_time: {
        time_t seconds = static_cast<time_t>(clock_at(ClockKind::Realtime) / kNsPerSec);
        if (!still_valid()) return;
        if (args[0] && !write_remote(args[0], &seconds, sizeof seconds)) return answer(0, EFAULT);
        return answer(seconds, 0);
    }
    case SYS_nanosleep:
    case SYS_clock_nanosleep: {
        if (!simulated) return let_through();
        const bool clocked = req.data.nr == SYS_clock_nanosleep;
        clockid_t clock = clocked ? static_cast<clockid_t>(static_cast<int32_t>(args[0])) : kMonotonic;
        if (!is_virtual_sleep_clock(clock)) return let_through();
        const bool absolute = clocked && (static_cast<int>(args[1]) & TIMER_ABSTIME);
        timespec request{};
        if (!still_valid()) return;
        if (!read_remote(clocked ? args[2] : args[0], &request, sizeof request)) return answer(0, EFAULT);
        if (!timespec_valid(request)) return answer(0, EINVAL);
        int64_t now_ns = absolute ? clock_value_ns(classify_clock(clock), e.now(), e.epoch) : 0;
        int64_t duration = sleep_duration_ns(absolute, request, now_ns);
        if (absolute && duration == 0) return answer(0, 0);  // already past: no scheduling point
        e.sleeps.push_back(Entry::Sleep{req.id, ns_to_seconds(duration)});
        if (!e.worker.joinable()) e.worker = std::thread([this, entry = &e] { worker_loop(*entry); });
        e.cv.notify_one();
        return;
    }
    default: return let_through();
    }
}

}  // namespace s4bxi::sim
