// PMIx client calls of a rank's process manager that wait outside the simulation, each
// announced to the server before it starts (outside_episode.hpp): the fences Open MPI's
// MPI_Init and MPI_Finalize make, the registration of its event handlers, PMIx_Init and
// PMIx_Finalize. Being preloaded, these definitions come before libpmix's and call it
// through RTLD_NEXT. Processes that are not ranks (mpirun, its daemons) and the ranks'
// other threads go straight to libpmix.
//
// Only pmix_proc_t is looked into (pmix_abi.hpp); the rest passes through untouched.
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "identity/pmix_abi.hpp"
#include "outside/outside_episode.hpp"
#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"

#define S4BXI_API extern "C" __attribute__((visibility("default")))

namespace wire = s4bxi::wire;
namespace outside = s4bxi::interpose::outside;

namespace {

using namespace s4bxi::interpose::pmix;
using pmix_op_cbfunc_t = void (*)(pmix_status_t status, void* cbdata);
using pmix_hdlr_reg_cbfunc_t = void (*)(pmix_status_t status, size_t reference, void* cbdata);
using pmix_notification_fn_t = void (*)();  // passed through


template <class Function>
Function next(const char* name)
{
    return reinterpret_cast<Function>(dlsym(RTLD_NEXT, name));
}

// The simulated thread of a rank, not already inside one of our own requests.
bool announced()
{
    return s4bxi::interpose::is_rank() && s4bxi::interpose::on_simulated_thread() && !s4bxi::interpose::in_call();
}

// The participants of a fence as ranks of the run. Open MPI fences over its whole job
// (one entry of rank PMIX_RANK_WILDCARD, or none at all).
struct Participants {
    wire::OutsideWaitKind kind = wire::OutsideWaitKind::Collective;
    std::vector<int32_t> ranks;  // empty: every rank
};

Participants participants(const pmix_proc_t* procs, size_t count)
{
    Participants p;
    for (size_t i = 0; procs && i < count; ++i) {
        if (procs[i].rank == kPmixRankWildcard) return Participants{};
        if (procs[i].rank >= kPmixRankValid) return Participants{wire::OutsideWaitKind::Unknown, {}};
        p.ranks.push_back(static_cast<int32_t>(procs[i].rank));
    }
    return p;
}

// The program's callback and what it will be called with, handed to the episode.
struct FenceCallback {
    outside::Operation* operation;
    pmix_op_cbfunc_t callback;
    void* data;
    pmix_status_t status = 0;

    static void invoke(void* self)
    {
        auto* c = static_cast<FenceCallback*>(self);
        if (c->callback) c->callback(c->status, c->data);
        delete c;
    }
};

struct RegistrationCallback {
    outside::Operation* operation;
    pmix_hdlr_reg_cbfunc_t callback;
    void* data;
    pmix_status_t status = 0;
    size_t reference = 0;

    static void invoke(void* self)
    {
        auto* c = static_cast<RegistrationCallback*>(self);
        if (c->callback) c->callback(c->status, c->reference, c->data);
        delete c;
    }
};

// On PMIx's thread: the episode runs the program's callback on the simulated thread.
void fence_done(pmix_status_t status, void* data)
{
    auto* c = static_cast<FenceCallback*>(data);
    c->status = status;
    outside::operation_completed(c->operation, FenceCallback::invoke, c);
}

void registration_done(pmix_status_t status, size_t reference, void* data)
{
    auto* c = static_cast<RegistrationCallback*>(data);
    c->status = status;
    c->reference = reference;
    outside::operation_completed(c->operation, RegistrationCallback::invoke, c);
}

// Starts an asynchronous call as an episode; `real()` makes the PMIx call with our callback
// and `wrapped` as its context.
template <class Callback, class Call>
pmix_status_t asynchronous(wire::OutsideWaitKind kind, const std::vector<int32_t>& ranks, const char* what,
                           Callback* wrapped, Call&& real)
{
    outside::begin_asynchronous(kind, ranks.data(), static_cast<uint32_t>(ranks.size()), what);
    wrapped->operation = outside::operation_started();
    outside::Operation* operation = wrapped->operation;
    pmix_status_t rc = real();
    if (rc != kPmixSuccess) {  // no callback will come (PMIX_OPERATION_SUCCEEDED included)
        delete wrapped;
        outside::operation_failed(operation);
    }
    return rc;
}

// A blocking call as one episode.
template <class Call>
pmix_status_t blocking(wire::OutsideWaitKind kind, const std::vector<int32_t>& ranks, const char* what, Call&& real)
{
    outside::begin_blocking(kind, ranks.data(), static_cast<uint32_t>(ranks.size()), what);
    pmix_status_t rc = real();
    outside::end_blocking();
    return rc;
}

}  // namespace

S4BXI_API pmix_status_t PMIx_Init(pmix_proc_t* proc, pmix_info_t* info, size_t ninfo)
{
    static const auto real = next<pmix_status_t (*)(pmix_proc_t*, pmix_info_t*, size_t)>("PMIx_Init");
    if (!real) return kPmixError;
    if (!announced()) return real(proc, info, ninfo);
    return blocking(wire::OutsideWaitKind::Local, {}, "PMIx_Init", [&] { return real(proc, info, ninfo); });
}

S4BXI_API pmix_status_t PMIx_Finalize(const pmix_info_t* info, size_t ninfo)
{
    static const auto real = next<pmix_status_t (*)(const pmix_info_t*, size_t)>("PMIx_Finalize");
    if (!real) return kPmixError;
    if (!announced()) return real(info, ninfo);
    return blocking(wire::OutsideWaitKind::Local, {}, "PMIx_Finalize", [&] { return real(info, ninfo); });
}

S4BXI_API pmix_status_t PMIx_Fence(const pmix_proc_t* procs, size_t nprocs, const pmix_info_t* info, size_t ninfo)
{
    static const auto real = next<pmix_status_t (*)(const pmix_proc_t*, size_t, const pmix_info_t*, size_t)>("PMIx_Fence");
    if (!real) return kPmixError;
    if (!announced()) return real(procs, nprocs, info, ninfo);
    Participants p = participants(procs, nprocs);
    return blocking(p.kind, p.ranks, "PMIx_Fence", [&] { return real(procs, nprocs, info, ninfo); });
}

S4BXI_API pmix_status_t PMIx_Fence_nb(const pmix_proc_t* procs, size_t nprocs, const pmix_info_t* info, size_t ninfo,
                                      pmix_op_cbfunc_t callback, void* data)
{
    static const auto real = next<pmix_status_t (*)(const pmix_proc_t*, size_t, const pmix_info_t*, size_t,
                                                    pmix_op_cbfunc_t, void*)>("PMIx_Fence_nb");
    if (!real) return kPmixError;
    // Inside PMIx_Fence (its own implementation) the blocking call is the episode.
    if (!announced() || outside::in_blocking_call()) return real(procs, nprocs, info, ninfo, callback, data);
    Participants p = participants(procs, nprocs);
    auto* wrapped = new FenceCallback{nullptr, callback, data};
    return asynchronous(p.kind, p.ranks, "PMIx_Fence_nb", wrapped,
                        [&] { return real(procs, nprocs, info, ninfo, fence_done, wrapped); });
}

S4BXI_API pmix_status_t PMIx_Register_event_handler(pmix_status_t* codes, size_t ncodes, pmix_info_t* info,
                                                    size_t ninfo, pmix_notification_fn_t handler,
                                                    pmix_hdlr_reg_cbfunc_t callback, void* data)
{
    using Real = pmix_status_t (*)(pmix_status_t*, size_t, pmix_info_t*, size_t, pmix_notification_fn_t,
                                   pmix_hdlr_reg_cbfunc_t, void*);
    static const auto real = next<Real>("PMIx_Register_event_handler");
    if (!real) return kPmixError;
    if (!announced() || outside::in_blocking_call()) return real(codes, ncodes, info, ninfo, handler, callback, data);
    if (!callback)  // blocking form: returns the handler's reference
        return blocking(wire::OutsideWaitKind::Local, {}, "PMIx_Register_event_handler",
                        [&] { return real(codes, ncodes, info, ninfo, handler, callback, data); });
    auto* wrapped = new RegistrationCallback{nullptr, callback, data};
    return asynchronous(wire::OutsideWaitKind::Local, {}, "PMIx_Register_event_handler", wrapped,
                        [&] { return real(codes, ncodes, info, ninfo, handler, registration_done, wrapped); });
}
