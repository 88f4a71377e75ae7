// What a request/reply hand-off between processes costs on this host, by waiting strategy:
// the physical limit beside which the cost of one s4bxi request (bench/null_request.c) is
// judged, and the measurements behind include/s4bxi/brief_wait.hpp.
//
// One server process and N client processes share a page. Each client writes a request and
// waits for its reply; the server waits for a doorbell, answers every pending request after
// `work` ns of busy work (the simulator's own cost per request), and waits again: the shape
// of s4bxi's channel (one slot per rank, one doorbell). Both sides wait with the strategy
// given:
//   spin    watch the word, nothing else (the physical limit on an idle host);
//   yield   watch it, calling sched_yield between looks;
//   futex   sleep on it at once (FUTEX_WAIT / FUTEX_WAKE on every hand-off);
//   brief   what s4bxi does (brief_wait.hpp): a short spin, yields, then the futex.
// Prints the wall time per request, seen by each client (median and range over clients).
//
// Usage: handoff STRATEGY CLIENTS ROUNDS [WORK_NS]
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "s4bxi/brief_wait.hpp"

namespace {

constexpr int kMaxClients = 64;

struct alignas(64) Slot {
    std::atomic<uint32_t> state{0};  // even: free or replied; odd: request posted
    std::atomic<uint32_t> sleepers{0};
    double ns_per_request = 0;
};

struct Shared {
    alignas(64) std::atomic<uint32_t> doorbell{0};
    std::atomic<uint32_t> server_sleeping{0};
    std::atomic<int> clients_done{0};
    Slot slots[kMaxClients];
};

enum class Strategy { Spin, Yield, Futex, Brief };

int64_t now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

long futex(std::atomic<uint32_t>* word, int op, uint32_t value)
{
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
}

// Waits until `word` differs from `seen`; `sleepers` counts futex sleepers so that the
// other side wakes only when someone sleeps, as s4bxi does (slot_futex.hpp).
void wait_change(Strategy strategy, std::atomic<uint32_t>& word, uint32_t seen, std::atomic<uint32_t>& sleepers)
{
    auto changed = [&] { return word.load(std::memory_order_acquire) != seen; };
    switch (strategy) {
    case Strategy::Spin:
        while (!changed()) __builtin_ia32_pause();
        return;
    case Strategy::Yield:
        while (!changed()) sched_yield();
        return;
    case Strategy::Brief:
        if (s4bxi::brief_wait(changed, now_ns)) return;
        [[fallthrough]];
    case Strategy::Futex:
        while (!changed()) {
            sleepers.fetch_add(1, std::memory_order_seq_cst);
            futex(&word, FUTEX_WAIT, seen);
            sleepers.fetch_sub(1, std::memory_order_release);
        }
        return;
    }
}

void wake(std::atomic<uint32_t>& word, std::atomic<uint32_t>& sleepers)
{
    if (sleepers.load(std::memory_order_seq_cst) != 0) futex(&word, FUTEX_WAKE, INT_MAX);
}

void busy(int64_t ns)
{
    if (ns <= 0) return;
    int64_t end = now_ns() + ns;
    while (now_ns() < end) {
    }
}

void client(Shared& shared, int index, long rounds, Strategy strategy)
{
    Slot& slot = shared.slots[index];
    int64_t start = now_ns();
    for (long round = 0; round < rounds; ++round) {
        uint32_t posted = slot.state.load(std::memory_order_relaxed) + 1;
        slot.state.store(posted, std::memory_order_seq_cst);
        shared.doorbell.fetch_add(1, std::memory_order_seq_cst);
        wake(shared.doorbell, shared.server_sleeping);
        wait_change(strategy, slot.state, posted, slot.sleepers);
    }
    slot.ns_per_request = double(now_ns() - start) / double(rounds);
    shared.clients_done.fetch_add(1);
    shared.doorbell.fetch_add(1, std::memory_order_seq_cst);  // the server looks once more
    wake(shared.doorbell, shared.server_sleeping);
}

void server(Shared& shared, int clients, Strategy strategy, int64_t work_ns)
{
    while (shared.clients_done.load() < clients) {
        // Read before the scan: a request posted during the scan changes it, and the wait
        // below returns at once.
        uint32_t seen = shared.doorbell.load(std::memory_order_acquire);
        bool served = false;
        for (int i = 0; i < clients; ++i) {
            Slot& slot = shared.slots[i];
            uint32_t state = slot.state.load(std::memory_order_acquire);
            if ((state & 1) == 0) continue;
            busy(work_ns);
            slot.state.store(state + 1, std::memory_order_seq_cst);
            wake(slot.state, slot.sleepers);
            served = true;
        }
        if (!served) wait_change(strategy, shared.doorbell, seen, shared.server_sleeping);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s spin|yield|futex|brief CLIENTS ROUNDS [WORK_NS]\n", argv[0]);
        return 2;
    }
    std::string name = argv[1];
    Strategy strategy = name == "spin" ? Strategy::Spin
                        : name == "yield" ? Strategy::Yield
                        : name == "futex" ? Strategy::Futex
                        : name == "brief" ? Strategy::Brief
                                          : (std::fprintf(stderr, "unknown strategy '%s'\n", argv[1]), std::exit(2), Strategy::Spin);
    int clients = std::atoi(argv[2]);
    long rounds = std::atol(argv[3]);
    int64_t work_ns = argc > 4 ? std::atol(argv[4]) : 0;
    if (clients < 1 || clients > kMaxClients || rounds < 1) {
        std::fprintf(stderr, "CLIENTS must be 1..%d and ROUNDS positive\n", kMaxClients);
        return 2;
    }
    void* page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return perror("mmap"), 1;
    auto& shared = *new (page) Shared;
    std::vector<pid_t> children;
    for (int i = 0; i < clients; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            client(shared, i, rounds, strategy);
            _exit(0);
        }
        children.push_back(pid);
    }
    server(shared, clients, strategy, work_ns);
    for (pid_t pid : children) waitpid(pid, nullptr, 0);
    std::vector<double> figures;
    for (int i = 0; i < clients; ++i) figures.push_back(shared.slots[i].ns_per_request);
    std::sort(figures.begin(), figures.end());
    std::printf("%s clients=%d rounds=%ld work=%lld ns: %.3f us per request (clients %.3f-%.3f)\n", name.c_str(),
                clients, rounds, (long long)work_ns, figures[figures.size() / 2] / 1000, figures.front() / 1000,
                figures.back() / 1000);
    return 0;
}
