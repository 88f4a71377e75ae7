#include "registration/machine_link.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "run/registry.hpp"
#include "s4bxi/channel_sync.hpp"
#include "s4bxi/slot_futex.hpp"

namespace s4bxi::sim {

MachineLink::MachineLink(int fd, std::string machine, std::string peer, wire::Doorbell& doorbell)
    : stream_(fd), machine_(std::move(machine)), peer_(std::move(peer)), doorbell_(doorbell)
{
    remote::time_out_receives(fd);
    reader_ = std::thread([this] { read_frames(); });
}

MachineLink::~MachineLink()
{
    shutdown(stream_.fd(), SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    close(stream_.fd());
}

std::string MachineLink::why_gone() const
{
    std::lock_guard<std::mutex> hold(mutex_);
    return why_gone_;
}

bool MachineLink::has_ranks() const
{
    std::lock_guard<std::mutex> hold(mutex_);
    return !ranks_.empty() || !hellos_.empty();
}

RankRecord* MachineLink::find(int32_t rank)
{
    std::lock_guard<std::mutex> hold(mutex_);
    auto found = ranks_.find(rank);
    return found == ranks_.end() ? nullptr : found->second;
}

bool MachineLink::next_hello(wire::Hello& hello)
{
    std::lock_guard<std::mutex> hold(mutex_);
    if (hellos_.empty()) return false;
    hello = hellos_.front();
    hellos_.pop_front();
    return true;
}

SocketStatus MachineLink::serve_rank(RankRecord& r)
{
    std::vector<wire::Hello> images;
    {
        std::lock_guard<std::mutex> hold(mutex_);
        std::erase_if(new_images_, [&](const wire::Hello& hello) {
            if (hello.rank != r.rank || hello.pid != r.pid) return false;
            images.push_back(hello);
            return true;
        });
    }
    // Outside the mutex: adopting asks the agent for the new thread's CPU clock, and the
    // answer comes through this link's reader, which takes the mutex.
    for (const wire::Hello& hello : images) adopt_new_image(r, hello);
    if (r.remote_gone.load(std::memory_order_acquire)) return SocketStatus::Closed;
    return images.empty() ? SocketStatus::Quiet : SocketStatus::Reattached;
}

void MachineLink::refuse(int32_t rank, const std::string& reason)
{
    wire::Welcome refusal{};
    refusal.status = 1;
    std::snprintf(refusal.reason, sizeof refusal.reason, "%s", reason.c_str());
    remote::RankHeader header{rank, 0};
    stream_.send(remote::Kind::RankWelcome, {{&header, sizeof header}, {&refusal, sizeof refusal}});
}

bool MachineLink::welcome(RankRecord& r, const wire::Welcome& welcome)
{
    {
        std::lock_guard<std::mutex> hold(mutex_);
        ranks_[r.rank] = &r;
    }
    remote::RankHeader header{r.rank, 0};
    if (!stream_.send(remote::Kind::RankWelcome, {{&header, sizeof header}, {&welcome, sizeof welcome}})) return false;
    ship(r);
    return true;
}

void MachineLink::ship(RankRecord& r)
{
    std::vector<uint8_t> delta;
    if (!r.channel_sync || r.channel_sync->collect(delta) == 0) return;
    remote::RankHeader header{r.rank, 0};
    stream_.send(remote::Kind::Delta, {{&header, sizeof header}, {delta.data(), delta.size()}});
}

bool MachineLink::call(const remote::Call& call, const void* bytes, size_t length, remote::Result& result,
                       std::vector<uint8_t>* out)
{
    std::unique_lock<std::mutex> hold(mutex_);
    if (gone()) return false;
    remote::Call numbered = call;
    numbered.id = next_call_++;
    pending_[numbered.id];
    hold.unlock();
    if (!stream_.send(remote::Kind::Call, {{&numbered, sizeof numbered}, {bytes, length}})) {
        hold.lock();
        pending_.erase(numbered.id);
        return false;
    }
    hold.lock();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(kCallSeconds * 1000));
    bool answered = results_.wait_until(hold, deadline, [&] { return pending_[numbered.id].done || gone(); });
    Pending done = std::move(pending_[numbered.id]);
    pending_.erase(numbered.id);
    if (!answered || !done.done) {
        if (!answered) {
            hold.unlock();
            lost(fmt::format("its agent did not answer a call within {:.0f} s", kCallSeconds));
        }
        return false;
    }
    result = done.result;
    if (out) *out = std::move(done.bytes);
    return true;
}

bool MachineLink::move(pid_t from_pid, uint64_t from, const MachineLink& target, pid_t to_pid, uint64_t to,
                       uint64_t length)
{
    remote::MoveTarget there;
    there.pid = to_pid;
    if (&target != this) {
        std::lock_guard<std::mutex> hold(target.mutex_);
        if (target.payload_address_.empty()) return false;
        remote::set_text(there.machine, target.payload_address_);
    }
    while (length > 0) {
        uint64_t piece = std::min(length, remote::kMaxTransfer);
        remote::Call call;
        call.op = static_cast<uint32_t>(remote::CallOp::Move);
        call.pid = from_pid;
        call.address = from;
        call.length = piece;
        there.address = to;
        remote::Result result;
        if (!this->call(call, &there, sizeof there, result, nullptr) || result.value != 1) return false;
        from += piece;
        to += piece;
        length -= piece;
    }
    return true;
}

void publish_to_machine(RankRecord& r)
{
    if (r.machine) r.machine->ship(r);
}

void MachineLink::bye()
{
    said_bye_ = true;
    stream_.send(remote::Kind::Bye, {});
}

// The machine is lost: its ranks are gone for the gate, which reports them.
void MachineLink::lost(const std::string& why)
{
    {
        std::lock_guard<std::mutex> hold(mutex_);
        if (gone()) return;
        why_gone_ = why;
        gone_.store(true, std::memory_order_release);
        if (!said_bye_)
            fmt::print(stderr, "s4bxi-simkernel: machine {} ({}) left the run: {}\n", machine_, peer_, why);
        for (auto& [rank, r] : ranks_) r->remote_gone.store(true, std::memory_order_release);
    }
    results_.notify_all();
    ring_doorbell(doorbell_);
}

void MachineLink::read_frames()
{
    remote::FrameHeader header;
    std::vector<uint8_t> body;
    std::string problem;
    while (stream_.receive_or_beat(header, body, problem, "its agent")) {
        size_t at = 0;
        switch (static_cast<remote::Kind>(header.kind)) {
        case remote::Kind::Beat: break;
        case remote::Kind::PayloadAddress: {
            std::lock_guard<std::mutex> hold(mutex_);
            payload_address_.assign(body.begin(), body.end());
            break;
        }
        case remote::Kind::RankHello: {
            wire::Hello hello;
            if (!remote::take(body, at, hello)) return lost("a malformed rank registration");
            std::lock_guard<std::mutex> hold(mutex_);
            // Before the new image's first delta, on this stream: the gate adopts it
            // before it serves that image's calls.
            (hello.flags & wire::kHelloReattach ? new_images_ : hellos_).push_back(hello);
            break;
        }
        case remote::Kind::Delta: {
            remote::RankHeader rank;
            if (!remote::take(body, at, rank)) return lost("a malformed delta");
            RankRecord* r = find(rank.rank);
            remote::Applied applied;
            if (!r || !r->channel_sync || !r->channel_sync->apply(body.data() + at, body.size() - at, applied))
                return lost(fmt::format("a delta for rank {} that does not apply", rank.rank));
            ring_doorbell(doorbell_);  // as the rank rings it after it writes (a request, a turn)
            break;
        }
        case remote::Kind::RankGone: {
            remote::RankHeader rank;
            if (!remote::take(body, at, rank)) return lost("a malformed rank end");
            if (RankRecord* r = find(rank.rank)) r->remote_gone.store(true, std::memory_order_release);
            ring_doorbell(doorbell_);
            break;
        }
        case remote::Kind::Result: {
            remote::Result result;
            if (!remote::take(body, at, result)) return lost("a malformed result");
            {
                std::lock_guard<std::mutex> hold(mutex_);
                auto found = pending_.find(result.id);
                if (found != pending_.end()) {
                    found->second.done = true;
                    found->second.result = result;
                    found->second.bytes.assign(body.begin() + static_cast<long>(at), body.end());
                }
            }
            results_.notify_all();
            break;
        }
        default: return lost(fmt::format("an unexpected frame of kind {}", header.kind));
        }
    }
    lost(problem.empty() ? "its agent closed the connection" : problem);
}

}  // namespace s4bxi::sim
