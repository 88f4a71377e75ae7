// Transfers over PCIe and the network as the engines wait for them: computed when they have
// their links to themselves, simulated otherwise; the timings shared by the engines.
#include <memory>
#include <vector>

#include "nic/nic_model.hpp"

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Simulated transfers that a step waits for. SimGrid 3.32 tells of an activity's end only
// to an actor that waits for it (Activity::on_completion too fires in the wait), so the
// waiting is done by a pool of actors, each waiting for one transfer at a time and handing
// its end to a step of the instant order; a transfer computed by formula needs none.
class TransferWatchers {
public:
    void watch(sg4::CommPtr comm, StepOwner owner, std::function<void(bool)> then)
    {
        Watcher* watcher = idle_.empty() ? create() : idle_.back();
        if (!idle_.empty()) idle_.pop_back();
        watcher->job = Job{std::move(comm), owner, std::move(then)};
        watcher->go->release();
    }
    void reset() { idle_.clear(); }

private:
    struct Job {
        sg4::CommPtr comm;
        StepOwner owner;
        std::function<void(bool)> then;
    };
    struct Watcher {
        sg4::SemaphorePtr go = sg4::Semaphore::create(0);
        Job job;
    };

    Watcher* create()
    {
        auto watcher = std::make_shared<Watcher>();
        sg4::Host* host = sg4::Engine::get_instance()->get_all_hosts().front();
        sg4::Actor::create("transfer_watcher", host, [this, watcher] {
            while (true) {
                watcher->go->acquire();
                Job job = std::move(watcher->job);
                bool failed = false;
                try {
                    job.comm->wait();
                } catch (const simgrid::NetworkFailureException&) {
                    failed = true;
                }
                instant_order().at(sg4::Engine::get_clock(), job.owner,
                                   [then = std::move(job.then), failed] { then(failed); });
                idle_.push_back(watcher.get());
            }
        })->daemonize();
        return watcher.get();
    }

    std::vector<Watcher*> idle_;
};

TransferWatchers& watchers()
{
    static TransferWatchers pool;
    return pool;
}

[[noreturn]] void throw_link_failure()
{
    throw simgrid::NetworkFailureException(XBT_THROW_POINT, "a link on the transfer's way is down");
}

// The resumption of a coroutine when a simulated transfer ends.
struct SimulatedEnd {
    sg4::CommPtr comm;
    bool failed = false;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> waiter)
    {
        when_ended(std::move(comm), instant_order().current(), [this, waiter](bool f) {
            failed = f;
            waiter.resume();
        });
    }
    void await_resume() const
    {
        if (failed) throw_link_failure();
    }
};

}  // namespace

void when_ended(sg4::CommPtr comm, StepOwner owner, std::function<void(bool failed)> then)
{
    watchers().watch(std::move(comm), owner, std::move(then));
}

NicTask<> transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes)
{
    LoneTransfers& lone = nic_model().lone_transfers();
    if (auto duration = lone.computed_duration(from, to, bytes)) {
        co_await delay(*duration);
        co_return;
    }
    if (!in_nic_step()) {
        SimulatedTransfer simulated(lone, from, to);
        sg4::Comm::sendto(from, to, bytes);
        co_return;
    }
    SimulatedTransfer counted(lone, from, to);  // on its links until it ends, or fails
    SimulatedEnd end{sg4::Comm::sendto_async(from, to, bytes)};
    co_await end;
}

NicTask<> pci_transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    double start = sg4::Engine::get_clock();
    co_await transfer(from, to, bytes);
    if (trace::enabled()) trace::record(op, nid, nid, start, sg4::Engine::get_clock());
}

AsyncPci AsyncPci::start_transfer(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    auto state = std::make_shared<State>();
    state->start = sg4::Engine::get_clock();
    state->op = op;
    state->nid = nid;
    state->from = from;
    state->to = to;
    LoneTransfers& lone = nic_model().lone_transfers();
    if (auto duration = lone.computed_duration(from, to, bytes)) {
        state->end = state->start + *duration;
        state->ended = true;
        return AsyncPci{state};
    }
    lone.simulated_begins(from, to);
    state->comm = sg4::Comm::sendto_async(from, to, bytes);
    if (in_nic_step()) {
        // Its end is noted in a step of the NIC that started it, and resumes its waiter.
        when_ended(state->comm, instant_order().current(), [state](bool failed) {
            nic_model().lone_transfers().simulated_ends(state->from, state->to);
            state->ended = true;
            state->failed = failed;
            state->end = sg4::Engine::get_clock();
            if (state->waiter) std::exchange(state->waiter, nullptr).resume();
        });
    }
    return AsyncPci{state};
}

namespace {

struct AsyncEnd {
    std::shared_ptr<AsyncPci::State> state;
    bool await_ready() const noexcept { return state->ended; }
    void await_suspend(std::coroutine_handle<> waiter) { state->waiter = waiter; }
    void await_resume() const {}
};

}  // namespace

NicTask<> AsyncPci::wait()
{
    State& s = *state;
    if (s.comm && !in_nic_step()) {  // a proxy's: it waits for the activity itself
        {
            SimulatedTransfer ends(nic_model().lone_transfers(), s.from, s.to, SimulatedTransfer::Since::Earlier);
            s.comm->wait();
        }
        s.end = s.comm->get_finish_time();
    } else if (s.comm) {
        // A named awaiter: GCC 12 destroys a braced temporary of a co_await twice (PR 100611).
        AsyncEnd end{state};
        co_await end;
        if (s.failed) throw_link_failure();
    } else if (s.end > sg4::Engine::get_clock()) {
        co_await delay(s.end - sg4::Engine::get_clock());
    }
    // The row ends when the transfer did, which may be long before this wait (the NIC
    // wrote an event in between): the reference traces async transfers at completion.
    if (trace::enabled()) trace::record(s.op, s.nid, s.nid, s.start, s.end);
}

void detached_pci(sg4::Host* from, sg4::Host* to, uint64_t bytes, trace::Op op, uint32_t nid)
{
    LoneTransfers& lone = nic_model().lone_transfers();
    double start = sg4::Engine::get_clock();
    if (auto duration = lone.computed_duration(from, to, bytes)) {  // its end is known now
        if (trace::enabled()) trace::record(op, nid, nid, start, start + *duration);
        return;
    }
    // Its links count it until it ends, noted in a step of the node's NIC.
    lone.simulated_begins(from, to);
    sg4::CommPtr comm = sg4::Comm::sendto_async(from, to, bytes);
    when_ended(comm, StepOwner::of(nid, NicEngine::Tx), [comm, from, to, op, nid, start](bool) {
        nic_model().lone_transfers().simulated_ends(from, to);
        if (trace::enabled()) trace::record(op, nid, nid, start, comm->get_finish_time());
    });
}

double first_packet_wait(uint64_t size)
{
    const NicTimings& timing = nic_model().timings();
    if (size >= timing.packet_size)
        return timing.pci_latency_heuristic + static_cast<double>(timing.packet_size) / timing.pci_heuristic_bandwidth;
    return timing.pci_latency_heuristic + static_cast<double>(size) / timing.pci_heuristic_bandwidth;
}

uint64_t inline_limit(bool matching)
{
    const NicTimings& timing = nic_model().timings();
    return matching ? timing.inline_matching : timing.inline_non_matching;
}

uint64_t pio_limit(bool matching)
{
    const NicTimings& timing = nic_model().timings();
    return matching ? timing.pio_matching : timing.pio_non_matching;
}

VirtualNetwork response_vn(VirtualNetwork request_vn)
{
    return request_vn == VirtualNetwork::ServiceRequest || request_vn == VirtualNetwork::ServiceResponse
               ? VirtualNetwork::ServiceResponse
               : VirtualNetwork::ComputeResponse;
}

}  // namespace s4bxi::sim

namespace s4bxi::sim {

void forget_transfer_watchers()
{
    watchers().reset();
}

}  // namespace s4bxi::sim
