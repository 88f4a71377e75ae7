#include "services/pmi_service.hpp"

#include <pmi.h>

#include <cstring>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include "run/context.hpp"
#include "run/registry.hpp"
#include "services/pmi_kvs.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_pmi, "PMI-1 bootstrap service");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

struct PmiState {
    PmiKvs kvs;
    PmiBarrierRounds rounds;
    std::vector<sg4::SemaphorePtr> waiting;  // one per rank in the current round
};

PmiState& state()
{
    static PmiState pmi;
    return pmi;
}

// A field of the request, never read past its end: a malformed request must not crash
// the server.
template <size_t N>
std::string_view field(const char (&text)[N])
{
    return std::string_view(text, strnlen(text, N));
}

int barrier(RankRecord& r)
{
    PmiState& pmi = state();
    int world = context().config.world_size;
    // SimGrid calls (creating or releasing a semaphore) may let other actors run, even
    // ranks that leave this barrier and enter the next one: the semaphore exists before
    // the arrival counts, and the last arrival takes the list of waiters out before
    // waking them, so that arrivals at the next barrier go to a list of their own.
    auto wakeup = sg4::Semaphore::create(0);
    PmiBarrierRounds::Arrival arrival = pmi.rounds.arrive(world);
    XBT_DEBUG("rank %d enters PMI_Barrier %llu (%d of %d arrived)", r.rank,
              static_cast<unsigned long long>(arrival.round), arrival.last ? world : pmi.rounds.arrived(), world);
    if (arrival.last) {
        std::vector<sg4::SemaphorePtr> waiters;
        waiters.swap(pmi.waiting);
        for (auto& waiter : waiters) waiter->release();
        return PMI_SUCCESS;
    }
    pmi.waiting.push_back(wakeup);
    r.waiting_on.set([round = arrival.round] {
        return fmt::format("PMI_Barrier (barrier {} of the run, waiting for the other ranks)", round + 1);
    });
    wakeup->acquire();
    return PMI_SUCCESS;
}

}  // namespace

bool is_pmi_request(uint32_t op)
{
    return op == static_cast<uint32_t>(wire::Op::PmiBarrier) || op == static_cast<uint32_t>(wire::Op::PmiKvsPut) ||
           op == static_cast<uint32_t>(wire::Op::PmiKvsGet);
}

int serve_pmi(RankRecord& r, const wire::Request& request, wire::Reply& reply)
{
    switch (static_cast<wire::Op>(request.op)) {
    case wire::Op::PmiBarrier: return barrier(r);
    case wire::Op::PmiKvsPut: {
        const auto& args = wire::args_as<wire::PmiKvsArgs>(request.args);
        state().kvs.put(field(args.name), field(args.key), field(args.value));
        return PMI_SUCCESS;
    }
    case wire::Op::PmiKvsGet: {
        const auto& args = wire::args_as<wire::PmiKvsArgs>(request.args);
        auto value = state().kvs.get(field(args.name), field(args.key));
        if (!value) return PMI_FAIL;
        auto& out = wire::args_as<wire::PmiKvsArgs>(reply.args);
        value->copy(out.value, sizeof out.value - 1);  // stored values came through the same field
        return PMI_SUCCESS;
    }
    default: return PMI_FAIL;
    }
}

}  // namespace s4bxi::sim
