// The direct-syscall trap end to end: a forked "rank" installs the filter
// (seccomp_filter.cpp) and hands the listener to a SeccompSupervisor
// (simkernel/services/seccomp_supervisor.cpp) in this process, where a fake gate answers the Sleep
// requests the supervisor posts into the rank's slot. The rank then makes raw time
// syscalls, from its simulated thread, another thread, and its children.
#include <catch2/catch.hpp>

#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "s4bxi/time_math.hpp"
#include "s4bxi/wire.hpp"
#include "services/seccomp_supervisor.hpp"
#include "time/seccomp_filter.hpp"

using namespace s4bxi;
using namespace s4bxi::timemath;

namespace {

constexpr double kEpoch = 1700000000.25;

struct Shared {
    wire::Slot slot;
    wire::Doorbell doorbell;
};

int64_t raw_clock(clockid_t clock)
{
    timespec ts{};
    if (syscall(SYS_clock_gettime, clock, &ts) != 0) return -errno;
    return timespec_to_ns(ts);
}

// The host's monotonic clock through the vDSO: never a syscall, never trapped.
int64_t vdso_monotonic()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_to_ns(ts);
}

uint64_t thread_cpu()
{
    return static_cast<uint64_t>(raw_clock(CLOCK_THREAD_CPUTIME_ID));
}

long raw_nanosleep(int64_t ns)
{
    timespec ts = ns_to_timespec(ns);
    return syscall(SYS_nanosleep, &ts, nullptr);
}

// ---------------------------------------------------------------------------------------
// The rank (child process). Failures go to the parent as text messages.

int g_sock = -1;
int g_failures = 0;

void send_text(const char* text)
{
    send(g_sock, text, strlen(text), MSG_NOSIGNAL);
}

void fail(int line, const char* format, ...)
{
    char text[512];
    int n = snprintf(text, sizeof text, "FAIL line %d: ", line);
    va_list args;
    va_start(args, format);
    vsnprintf(text + n, sizeof text - static_cast<size_t>(n), format, args);
    va_end(args);
    send_text(text);
    ++g_failures;
}

#define EXPECT_EQ(a, b)                                                                                 \
    do {                                                                                                \
        long long va_ = static_cast<long long>(a), vb_ = static_cast<long long>(b);                     \
        if (va_ != vb_) fail(__LINE__, "%s == %s: %lld != %lld", #a, #b, va_, vb_);                     \
    } while (0)
#define EXPECT_TRUE(cond)                                                                               \
    do {                                                                                                \
        if (!(cond)) fail(__LINE__, "%s", #cond);                                                       \
    } while (0)

void wait_byte(char expected)
{
    char byte = 0;
    while (recv(g_sock, &byte, 1, 0) < 0 && errno == EINTR) {}
    if (byte != expected) _exit(100);
}

bool send_fd(int fd, pid_t tid)
{
    iovec iov{&tid, sizeof tid};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
        cmsg->cmsg_level = SOL_SOCKET;
        cmsg->cmsg_type = SCM_RIGHTS;
        cmsg->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cmsg), &fd, sizeof fd);
    }
    return sendmsg(g_sock, &msg, 0) == sizeof tid;
}

// Registration as the runtime does it: clock fields of the slot, then the trap.
void register_rank(Shared* shared, bool killable)
{
    shared->slot.cpu_at_reply_ns.store(thread_cpu());
    shared->slot.sim_time_at_reply_bits.store(0);  // simulated time 0.0
    shared->slot.threads_clock_offset_ns.store(threads_clock_offset(0, vdso_monotonic()));
    int fd = s4bxi::interpose::install_time_trap(killable);
    send_fd(fd, static_cast<pid_t>(syscall(SYS_gettid)));
    if (fd < 0) _exit(0);
    close(fd);
    wait_byte('g');
}

// The rank's clock as its other threads see it (ns of simulated time): the simulated
// thread's last reading continued in real time.
int64_t other_thread_expected(Shared* shared)
{
    return other_thread_virtual_ns(vdso_monotonic(), shared->slot.threads_clock_offset_ns.load());
}

// Checks that do not depend on the CPU model: other threads, children, detaching.
void check_real_time_elsewhere(Shared* shared)
{
    // The simulated thread's trapped reading is where the other threads continue from.
    const int64_t reading = raw_clock(CLOCK_MONOTONIC) - kMonotonicOffsetNs;
    EXPECT_TRUE(std::llabs(other_thread_expected(shared) - reading) < 100'000'000);

    // Another thread of the rank: the rank's clock continued in real time, real sleeps.
    std::thread([shared] {
        int64_t expected = kMonotonicOffsetNs + other_thread_expected(shared);
        int64_t got = raw_clock(CLOCK_MONOTONIC);
        EXPECT_TRUE(got >= expected && got - expected < 100'000'000);
        expected = epoch_to_ns(kEpoch) + other_thread_expected(shared);
        got = raw_clock(CLOCK_REALTIME);
        EXPECT_TRUE(got >= expected && got - expected < 100'000'000);
        timeval tv{};
        EXPECT_EQ(syscall(SYS_gettimeofday, &tv, nullptr), 0);
        EXPECT_TRUE(std::llabs(tv.tv_sec * kNsPerSec + tv.tv_usec * 1000LL - expected) < 100'000'000);
        time_t seconds = 0;
        EXPECT_TRUE(std::llabs(syscall(SYS_time, &seconds) - expected / kNsPerSec) <= 1);
        EXPECT_TRUE(std::llabs(seconds - expected / kNsPerSec) <= 1);
        // Sleeps are real, and the thread's clock moves with them.
        int64_t start = vdso_monotonic();
        int64_t clock_start = raw_clock(CLOCK_MONOTONIC);
        EXPECT_EQ(raw_nanosleep(50'000'000), 0);
        EXPECT_TRUE(vdso_monotonic() - start >= 50'000'000);
        EXPECT_TRUE(raw_clock(CLOCK_MONOTONIC) - clock_start >= 50'000'000);
        // CPU clocks pass untouched.
        EXPECT_TRUE(raw_clock(CLOCK_THREAD_CPUTIME_ID) < kNsPerSec);
    }).join();

    // A forked child inherits the filter: real time, and it must not die of it.
    int64_t start = vdso_monotonic();
    pid_t child = fork();
    if (child == 0) {
        bool ok = std::llabs(raw_clock(CLOCK_MONOTONIC) - vdso_monotonic()) < 100'000'000 &&
                  raw_nanosleep(50'000'000) == 0 && vdso_monotonic() - start >= 50'000'000;
        _exit(ok ? 0 : 3);
    }
    int status = -1;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    // An exec'd tool (no interposer at all) and a shell through system().
    start = vdso_monotonic();
    child = fork();
    if (child == 0) {
        execl("/bin/sleep", "sleep", "0.1", static_cast<char*>(nullptr));
        _exit(127);
    }
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(vdso_monotonic() - start >= 100'000'000);
    EXPECT_EQ(system("sleep 0.1 && /bin/true"), 0);

    // The interposer's own untrapped syscalls see the host's clock.
    timespec ts{};
    EXPECT_EQ(s4bxi::interpose::untrapped_clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    EXPECT_TRUE(std::llabs(timespec_to_ns(ts) - vdso_monotonic()) < 100'000'000);
    start = vdso_monotonic();
    ts = {0, 20'000'000};
    EXPECT_EQ(s4bxi::interpose::untrapped_nanosleep(&ts, nullptr), 0);
    EXPECT_TRUE(vdso_monotonic() - start >= 20'000'000);
}

// After remove_rank: the simulated thread too gets real time.
void check_detached()
{
    send_text("REMOVE");
    wait_byte('r');
    EXPECT_TRUE(std::llabs(raw_clock(CLOCK_MONOTONIC) - vdso_monotonic()) < 100'000'000);
    int64_t start = vdso_monotonic();
    EXPECT_EQ(raw_nanosleep(20'000'000), 0);
    EXPECT_TRUE(vdso_monotonic() - start >= 20'000'000);
}

void rank_zero_model(Shared* shared, bool killable)
{
    register_rank(shared, killable);
    const int64_t mono0 = kMonotonicOffsetNs;  // simulated time 0
    const int64_t real0 = epoch_to_ns(kEpoch);

    EXPECT_EQ(raw_clock(CLOCK_MONOTONIC), mono0);
    EXPECT_EQ(raw_clock(CLOCK_BOOTTIME), mono0);
    EXPECT_EQ(raw_clock(CLOCK_REALTIME), real0);
    EXPECT_EQ(raw_clock(CLOCK_TAI), real0);

    // A 2 s sleep is 2 s of simulated time, and no real time.
    int64_t host_start = vdso_monotonic();
    EXPECT_EQ(raw_nanosleep(2 * kNsPerSec), 0);
    // The other threads' clock jumped with it at the reply.
    EXPECT_TRUE(std::llabs(other_thread_expected(shared) - 2 * kNsPerSec) < 100'000'000);
    EXPECT_EQ(raw_clock(CLOCK_MONOTONIC), mono0 + 2 * kNsPerSec);
    EXPECT_TRUE(vdso_monotonic() - host_start < kNsPerSec);

    timeval tv{};
    EXPECT_EQ(syscall(SYS_gettimeofday, &tv, nullptr), 0);
    EXPECT_EQ(tv.tv_sec, (real0 + 2 * kNsPerSec) / kNsPerSec);
    EXPECT_EQ(tv.tv_usec, ((real0 + 2 * kNsPerSec) % kNsPerSec) / 1000);
    time_t stored = 0;
    EXPECT_EQ(syscall(SYS_time, &stored), (real0 + 2 * kNsPerSec) / kNsPerSec);
    EXPECT_EQ(stored, (real0 + 2 * kNsPerSec) / kNsPerSec);

    // clock_nanosleep: absolute on MONOTONIC, relative on REALTIME, deadline in the past.
    timespec deadline = ns_to_timespec(mono0 + 3 * kNsPerSec);
    EXPECT_EQ(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr), 0);
    EXPECT_EQ(raw_clock(CLOCK_MONOTONIC), mono0 + 3 * kNsPerSec);
    timespec half{0, 500'000'000};
    EXPECT_EQ(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &half, nullptr), 0);
    EXPECT_EQ(raw_clock(CLOCK_REALTIME), real0 + 3 * kNsPerSec + 500'000'000);
    EXPECT_EQ(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nullptr), 0);
    EXPECT_EQ(raw_clock(CLOCK_MONOTONIC), mono0 + 3 * kNsPerSec + 500'000'000);

    // Errors, as the kernel gives them.
    timespec bad{0, 1'000'000'000};
    EXPECT_EQ(syscall(SYS_nanosleep, &bad, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<timespec*>(8)), -1);
    EXPECT_EQ(errno, EFAULT);
    EXPECT_EQ(raw_clock(10), -EINVAL);
    EXPECT_EQ(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, 0, &half, nullptr), -1);
    EXPECT_EQ(errno, EOPNOTSUPP);
    // CPU clocks are not trapped (the runtime reads its thread CPU time that way).
    EXPECT_TRUE(raw_clock(CLOCK_THREAD_CPUTIME_ID) > 0);
    EXPECT_TRUE(raw_clock(CLOCK_THREAD_CPUTIME_ID) < kNsPerSec);

    check_real_time_elsewhere(shared);
    // Time spent by the rank blocked on its children is not simulated time (zero model).
    EXPECT_EQ(raw_clock(CLOCK_MONOTONIC), mono0 + 3 * kNsPerSec + 500'000'000);
    check_detached();
}

void rank_measured_model(Shared* shared, double factor)
{
    register_rank(shared, true);
    int64_t a = raw_clock(CLOCK_MONOTONIC);
    uint64_t c1 = thread_cpu();
    while (thread_cpu() - c1 < 50'000'000) {}
    uint64_t c2 = thread_cpu();
    int64_t b = raw_clock(CLOCK_MONOTONIC);
    // The clock moved by the CPU time between the reads, scaled: at least the CPU measured
    // inside them, at most that plus the reads' own cost (bounded generously).
    const int64_t scaled = static_cast<int64_t>(static_cast<double>(c2 - c1) * factor);
    EXPECT_TRUE(b - a >= scaled);
    EXPECT_TRUE(b - a <= scaled + static_cast<int64_t>(5e6 * factor));

    EXPECT_EQ(raw_nanosleep(kNsPerSec), 0);
    int64_t d = raw_clock(CLOCK_MONOTONIC);
    EXPECT_TRUE(d - b >= kNsPerSec);
    EXPECT_TRUE(d - b <= kNsPerSec + static_cast<int64_t>(5e6 * factor));

    check_real_time_elsewhere(shared);
    check_detached();
}

// ---------------------------------------------------------------------------------------
// The server side: supervisor + fake gate.

struct FakeGate {
    FakeGate(Shared* shared_, bool zero_model_, double factor_) : shared(shared_), zero_model(zero_model_), factor(factor_) {}
    Shared* shared;
    bool zero_model;
    double factor;
    double sim_time = 0.0;
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::vector<double> sleeps;  // seconds of every Sleep request, in order
    std::vector<uint32_t> seqs;
    std::thread thread;

    void run()
    {
        wire::Slot& slot = shared->slot;
        while (!stop.load()) {
            if (slot.state.load(std::memory_order_acquire) != static_cast<uint32_t>(wire::SlotState::Posted)) {
                usleep(500);
                continue;
            }
            const wire::Request& request = slot.request;
            if (!zero_model) sim_time += static_cast<double>(request.cpu_ns) * 1e-9 * factor;
            if (request.op == static_cast<uint32_t>(wire::Op::Sleep)) {
                double seconds = wire::args_as<wire::SleepArgs>(request.args).seconds;
                sim_time += seconds;
                std::lock_guard lock(mutex);
                sleeps.push_back(seconds);
                seqs.push_back(request.seq);
            }
            slot.reply.rc = 0;
            slot.reply.seq = request.seq;
            slot.reply.sim_time = sim_time;
            slot.state.store(static_cast<uint32_t>(wire::SlotState::Replied), std::memory_order_release);
            syscall(SYS_futex, &slot.state, FUTEX_WAKE, 1, nullptr, nullptr, 0);
        }
    }
};

int receive_fd(int sock, pid_t& tid)
{
    iovec iov{&tid, sizeof tid};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (recvmsg(sock, &msg, 0) != sizeof tid) return -2;
    int fd = -1;
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg))
        if (cmsg->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
    return fd;
}

struct RunResult {
    bool trap_available = false;
    std::vector<std::string> failures;
    int status = -1;
    std::vector<double> sleeps;
    std::vector<uint32_t> seqs;
    sim::SeccompSupervisor::Stats stats;
};

RunResult run_rank(bool zero_model, double factor, void (*rank)(Shared*, bool, double), bool killable)
{
    RunResult result;
    auto* shared = static_cast<Shared*>(
        mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    REQUIRE(shared != MAP_FAILED);
    new (shared) Shared{};
    int sockets[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) == 0);
    // Fork before any thread exists here.
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        close(sockets[0]);
        g_sock = sockets[1];
        rank(shared, killable, factor);
        send_text("DONE");
        _exit(g_failures ? 1 : 0);
    }
    close(sockets[1]);
    int sock = sockets[0];
    pid_t tid = 0;
    int listener = receive_fd(sock, tid);
    if (listener >= 0) {
        result.trap_available = true;
        auto supervisor = std::make_unique<sim::SeccompSupervisor>();
        FakeGate gate(shared, zero_model, factor);
        gate.thread = std::thread([&] { gate.run(); });
        supervisor->add_rank(0, sim::local_processes(), child, tid, listener, &shared->slot, &shared->doorbell, factor,
                             zero_model, kEpoch);
        char go = 'g';
        send(sock, &go, 1, 0);
        while (true) {
            pollfd pfd{sock, POLLIN, 0};
            if (poll(&pfd, 1, 30'000) <= 0) {
                result.failures.push_back("timeout: the rank hangs");
                kill(child, SIGKILL);
                break;
            }
            char text[600];
            ssize_t n = recv(sock, text, sizeof text - 1, 0);
            if (n <= 0) break;
            text[n] = '\0';
            if (strcmp(text, "DONE") == 0) break;
            if (strcmp(text, "REMOVE") == 0) {
                supervisor->remove_rank(0);
                char r = 'r';
                send(sock, &r, 1, 0);
                continue;
            }
            result.failures.emplace_back(text);
        }
        waitpid(child, &result.status, 0);
        gate.stop.store(true);
        gate.thread.join();
        result.sleeps = gate.sleeps;
        result.seqs = gate.seqs;
        result.stats = supervisor->stats();
        supervisor.reset();
    } else {
        waitpid(child, &result.status, 0);
    }
    close(sock);
    munmap(shared, sizeof(Shared));
    return result;
}

void check_run(const RunResult& result)
{
    for (const auto& failure : result.failures) FAIL_CHECK(failure);
    CHECK(WIFEXITED(result.status));
    CHECK(WEXITSTATUS(result.status) == 0);
}

}  // namespace

TEST_CASE("direct time syscalls of a rank are served in simulated time (zero CPU model)", "[interpose][seccomp]")
{
    for (bool killable : {true, false}) {
        INFO("wait_killable = " << killable);
        RunResult result = run_rank(
            true, 1.0, [](Shared* s, bool k, double) { rank_zero_model(s, k); }, killable);
        if (!result.trap_available) {
            WARN("seccomp user notification is not available here; nothing to test");
            return;
        }
        check_run(result);
        // Exactly the three simulated sleeps (the past deadline posts nothing); each one a
        // new sequence number after the last.
        REQUIRE(result.sleeps.size() == 3);
        CHECK(result.sleeps[0] == 2.0);
        CHECK(result.sleeps[1] == 1.0);
        CHECK(result.sleeps[2] == 0.5);
        CHECK(result.seqs == std::vector<uint32_t>{1, 2, 3});
        CHECK(result.stats.sleeps == 3);
        CHECK(result.stats.errors == 2);  // EINVAL, EFAULT
        CHECK(result.stats.served >= 11);
        CHECK(result.stats.continued > 0);  // the thread, the children
    }
}

TEST_CASE("the measured CPU model scales the rank's CPU time", "[interpose][seccomp]")
{
    const double factor = 2.0;
    RunResult result = run_rank(
        false, factor, [](Shared* s, bool, double f) { rank_measured_model(s, f); }, true);
    if (!result.trap_available) {
        WARN("seccomp user notification is not available here; nothing to test");
        return;
    }
    check_run(result);
    REQUIRE(result.sleeps.size() == 1);
    CHECK(result.sleeps[0] == 1.0);
}
