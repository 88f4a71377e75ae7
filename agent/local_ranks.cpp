#include "local_ranks.hpp"

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>

#include "s4bxi/fd_passing.hpp"
#include "s4bxi/rank_hello.hpp"
#include "s4bxi/slot_futex.hpp"

namespace s4bxi::agent {

namespace {

constexpr auto kWelcomeWait = std::chrono::seconds(30);
constexpr long kRelayPeriodNs = 2'000'000;  // a rank's writes without a ring reach the server within it

// Zeroed shared memory of `bytes`, mapped here, and its fd to pass to a rank.
uint8_t* create_shared(const char* name, size_t bytes, int& fd)
{
    fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) return nullptr;
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return memory == MAP_FAILED ? nullptr : static_cast<uint8_t*>(memory);
}

}  // namespace

LocalRanks::LocalRanks(remote::FrameStream& server, sim::SeccompSupervisor& trap) : server_(server), trap_(trap)
{
    auto* memory = create_shared("s4bxi-agent-doorbell", sizeof(wire::Doorbell), doorbell_fd_);
    if (!memory) throw std::runtime_error("cannot create the doorbell");
    doorbell_ = new (memory) wire::Doorbell{};
}

LocalRanks::~LocalRanks()
{
    for (auto& [rank, r] : ranks_) {
        trap_.remove_rank(rank);  // before its slot goes
        if (r->channel) munmap(r->channel, remote::ChannelSync::kBytes);
        if (r->slot_fd >= 0) close(r->slot_fd);
        if (r->socket_fd >= 0) close(r->socket_fd);
    }
}

LocalRank* LocalRanks::find(int32_t rank)
{
    auto found = ranks_.find(rank);
    return found == ranks_.end() ? nullptr : found->second.get();
}

void LocalRanks::serve_registrations(int listen_fd, const std::atomic<bool>& stop)
{
    while (!stop) {
        pollfd watched{listen_fd, POLLIN, 0};
        if (poll(&watched, 1, 100) <= 0) continue;
        int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) register_rank(fd);
    }
}

// As the server registers a rank of its own machine (simkernel/server.cpp), but the
// server decides from the Hello this agent forwards; the channel is this machine's.
void LocalRanks::register_rank(int fd)
{
    wire::Hello hello{};
    switch (wire::receive_hello(fd, hello)) {
    case wire::HelloReceipt::Nothing: close(fd); return;
    case wire::HelloReceipt::WrongPeer: return wire::refuse_rank(fd, wire::kWrongPeerRefusal);
    case wire::HelloReceipt::Received: break;
    }
    if (hello.flags & wire::kHelloReattach) return wire::refuse_rank(fd, "re-attach of a rank that never registered");
    std::unique_lock<std::mutex> hold(mutex_);
    if (find(hello.rank)) {
        hold.unlock();
        return wire::refuse_rank(fd, "this rank registered twice on this machine");
    }
    auto record = std::make_unique<LocalRank>();
    LocalRank& r = *record;
    r.rank = hello.rank;
    r.pid = hello.pid;
    r.socket_fd = fd;
    ranks_[hello.rank] = std::move(record);
    hold.unlock();
    if (!server_.send(remote::Kind::RankHello, {{&hello, sizeof hello}})) return wire::refuse_rank(fd, "the server is gone");
    hold.lock();
    if (!answered_.wait_for(hold, kWelcomeWait, [&r] { return r.answered; })) {
        hold.unlock();
        return wire::refuse_rank(fd, "no answer from the server within 30 s");
    }
    wire::Welcome welcome = r.welcome;
    hold.unlock();
    if (welcome.status != 0) {
        welcome.reason[sizeof welcome.reason - 1] = '\0';
        return wire::refuse_rank(fd, welcome.reason);
    }
    int fds[2] = {r.slot_fd, doorbell_fd_};
    if (!wire::send_with_fds(fd, &welcome, sizeof welcome, fds, 2)) return;  // gone: the relay sees it
    // The rank's second message: its time trap's listener, if it has one. Its notifications
    // are answered here, from the rank's channel, as the server answers those of its own
    // machine's ranks: a trapped sleep posts its request into the slot like the rank's calls.
    pollfd watched{fd, POLLIN, 0};
    int32_t kind = 0;
    int trap = -1;
    if (poll(&watched, 1, 10000) > 0 && wire::receive_with_fds(fd, &kind, sizeof kind, &trap, 1) && trap >= 0)
        trap_.add_rank(hello.rank, sim::local_processes(), hello.pid, hello.tid, trap,
                       reinterpret_cast<wire::Slot*>(r.channel), doorbell_, welcome.cpu_factor,
                       welcome.cpu_model == static_cast<uint32_t>(wire::CpuModel::Zero), welcome.epoch);
    r.active = true;
    ring();
}

// The server's answer to a rank's Hello: its channel is created now, before any delta of
// the server's for it is applied (they follow on the same stream).
void LocalRanks::welcomed(int32_t rank, const wire::Welcome& welcome)
{
    std::lock_guard<std::mutex> hold(mutex_);
    LocalRank* r = find(rank);
    if (!r) return;
    r->welcome = welcome;
    if (welcome.status == 0) {
        r->channel = create_shared("s4bxi-channel", remote::ChannelSync::kBytes, r->slot_fd);
        if (!r->channel) {
            r->welcome.status = 1;
            std::snprintf(r->welcome.reason, sizeof r->welcome.reason, "the agent cannot create the rank's channel");
        } else {
            r->sync = std::make_unique<remote::ChannelSync>(r->channel);
            // This agent reads and writes the rank's memory: under Yama's ptrace_scope=1 the
            // rank names it (PR_SET_PTRACER). No delivery thread: a payload between two
            // machines is the server's to move.
            r->welcome.ptracer_pid = getpid();
            r->welcome.copy_once_from = 0;
        }
    }
    r->answered = true;
    answered_.notify_all();
}

bool LocalRanks::apply(int32_t rank, const uint8_t* delta, size_t size)
{
    LocalRank* r;
    {
        std::lock_guard<std::mutex> hold(mutex_);
        r = find(rank);
    }
    if (!r || !r->sync) return false;
    remote::Applied applied;
    if (!r->sync->apply(delta, size, applied)) return false;
    auto& slot = *reinterpret_cast<wire::Slot*>(r->channel);
    // Whoever sleeps on a word that changed: the rank's waits count their sleepers, but
    // a wake-up without one costs only the system call.
    if (applied.state) futex(&slot.state, FUTEX_WAKE, INT_MAX, nullptr);
    if (applied.posted_served) futex(&slot.posted_served, FUTEX_WAKE, INT_MAX, nullptr);
    if (applied.parked_done) futex(&slot.parked_done, FUTEX_WAKE, INT_MAX, nullptr);
    return true;
}

void LocalRanks::ring()
{
    doorbell_->count.fetch_add(1, std::memory_order_acq_rel);
    futex(&doorbell_->count, FUTEX_WAKE, 1, nullptr);
}

bool LocalRanks::all_gone()
{
    std::lock_guard<std::mutex> hold(mutex_);
    for (auto& [rank, r] : ranks_)
        if (!r->gone) return false;
    return !ranks_.empty();
}

void LocalRanks::relay_once(std::vector<uint8_t>& delta)
{
    std::vector<LocalRank*> ranks;
    {
        std::lock_guard<std::mutex> hold(mutex_);
        for (auto& [rank, r] : ranks_)
            if (r->active && !r->gone) ranks.push_back(r.get());
    }
    auto ship = [&](const LocalRank& r) {
        delta.clear();
        if (r.sync->collect(delta) == 0) return;
        remote::RankHeader header{r.rank, 0};
        server_.send(remote::Kind::Delta, {{&header, sizeof header}, {delta.data(), delta.size()}});
    };
    for (LocalRank* r : ranks) {
        ship(*r);
        // Its registration socket carries the hello of the program the rank exec'd, or
        // ends with the process (or an exec that lost it).
        pollfd watched{r->socket_fd, POLLIN, 0};
        if (poll(&watched, 1, 0) <= 0) continue;
        char byte;
        bool hung_up = watched.revents & (POLLHUP | POLLERR);
        ssize_t waiting = hung_up ? 0 : recv(r->socket_fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (waiting > 0) {
            reattach(*r);
        } else if (waiting == 0) {
            ship(*r);  // its last writes before its end
            remote::RankHeader gone{r->rank, static_cast<int32_t>(remote::RankGoneStatus::Closed)};
            server_.send(remote::Kind::RankGone, {{&gone, sizeof gone}});
            trap_.remove_rank(r->rank);
            std::lock_guard<std::mutex> hold(mutex_);
            r->gone = true;
        }
    }
}

// The rank exec'd a new program (a wrapper script, a shim): same process, same socket, the
// same channel again, as the server does for a rank of its machine (registration/
// rank_socket.cpp). The server hears of the new image before its first delta, on the same
// stream (what the new program asks for: an OpenSHMEM program's memory waits). The new
// image's time trap is the first one's, which survives exec.
void LocalRanks::reattach(LocalRank& r)
{
    wire::Hello hello{};
    if (recv(r.socket_fd, &hello, sizeof hello, MSG_DONTWAIT) != sizeof hello || !(hello.flags & wire::kHelloReattach) ||
        hello.pid != r.pid || hello.version != wire::kVersion)
        return;  // malformed: ignored, the rank keeps running
    if (!server_.send(remote::Kind::RankHello, {{&hello, sizeof hello}})) return;
    int fds[2] = {r.slot_fd, doorbell_fd_};
    if (!wire::send_with_fds(r.socket_fd, &r.welcome, sizeof r.welcome, fds, 2)) return;
    pollfd watched{r.socket_fd, POLLIN, 0};
    int32_t kind = 0;
    int trap = -1;
    if (poll(&watched, 1, 10000) > 0 && wire::receive_with_fds(r.socket_fd, &kind, sizeof kind, &trap, 1) && trap >= 0)
        close(trap);
}

void LocalRanks::relay(const std::atomic<bool>& stop)
{
    std::vector<uint8_t> delta;
    uint32_t seen = doorbell_->count.load(std::memory_order_acquire);
    while (!stop) {
        relay_once(delta);
        doorbell_->server_waiting.store(1, std::memory_order_seq_cst);
        if (doorbell_->count.load(std::memory_order_seq_cst) == seen) {
            timespec timeout{0, kRelayPeriodNs};
            futex(&doorbell_->count, FUTEX_WAIT, seen, &timeout);
        }
        doorbell_->server_waiting.store(0, std::memory_order_relaxed);
        seen = doorbell_->count.load(std::memory_order_acquire);
    }
}

}  // namespace s4bxi::agent
