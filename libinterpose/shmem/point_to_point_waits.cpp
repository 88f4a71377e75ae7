// OpenSHMEM's point-to-point waits and tests (shmem_int_wait_until, shmem_long_test, ...):
// wrappers that count them in the slot and call the OpenSHMEM library's definition. Under
// the zero CPU model a rank that waits by reading its memory is taken to wait for the next
// write into it once it has used a budget of CPU time with no request (docs/time.md,
// waiting on memory); a rank inside one of these calls, or calling tests, says that is what
// it does, and gets the short budget. One that computes over memory it received (a check of
// 16 MiB) is not mistaken for one that waits.
//
// Only the simulated thread counts (the budget is its CPU time), and only in a rank. The
// next definition is found at the first call (dlsym RTLD_NEXT, then SOS's pshmem_ name).
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "rank/rank_state.hpp"
#include "time/real_symbols.hpp"

#define S4BXI_EXPORT extern "C" __attribute__((visibility("default")))

namespace s4bxi::interpose::shmem {

namespace {

void* next_definition(const char* name)
{
    t_resolving = true;
    void* next = dlsym(RTLD_NEXT, name);
    char profiled[96];
    snprintf(profiled, sizeof profiled, "p%s", name);
    if (!next) next = dlsym(RTLD_NEXT, profiled);
    t_resolving = false;
    if (!next) {
        char line[160];
        int n = snprintf(line, sizeof line, "s4bxi: %s called, but no OpenSHMEM library defines it\n", name);
        if (write(2, line, static_cast<size_t>(n)) < 0) {}
        abort();
    }
    return next;
}

template <class Fn>
Fn next_of(std::atomic<Fn>& cache, const char* name)
{
    Fn fn = cache.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<Fn>(next_definition(name));
        cache.store(fn, std::memory_order_release);
    }
    return fn;
}

wire::Slot* counting_slot()
{
    if (!g_rank.active || !g_rank.slot || current_tid() != g_rank.tid) return nullptr;
    return g_rank.slot;
}

// A test: one more call.
void count_test()
{
    if (wire::Slot* slot = counting_slot()) slot->memory_polls.fetch_add(1, std::memory_order_relaxed);
}

// A wait, for its duration.
class WaitUnderWay {
public:
    WaitUnderWay() : slot_(counting_slot())
    {
        if (!slot_) return;
        slot_->memory_polls.fetch_add(1, std::memory_order_relaxed);
        slot_->memory_waits_open.fetch_add(1, std::memory_order_relaxed);
    }
    ~WaitUnderWay()
    {
        if (slot_) slot_->memory_waits_open.fetch_sub(1, std::memory_order_relaxed);
    }
    WaitUnderWay(const WaitUnderWay&) = delete;
    WaitUnderWay& operator=(const WaitUnderWay&) = delete;

private:
    wire::Slot* slot_;
};

}  // namespace

// A wrapper of `name`, returning `Ret`, with parameters `params` passed on as `args`;
// `kind` TEST counts one call, WAIT a wait for as long as it lasts.
#define S4BXI_FORWARD(kind, Ret, name, params, args)                                   \
    S4BXI_EXPORT Ret name params                                                       \
    {                                                                                  \
        using Fn = Ret(*) params;                                                      \
        static std::atomic<Fn> next{nullptr};                                          \
        S4BXI_COUNT_##kind;                                                            \
        return next_of(next, #name) args;                                              \
    }
#define S4BXI_COUNT_TEST count_test()
#define S4BXI_COUNT_WAIT WaitUnderWay under_way

// The seven forms of a wait or a test in the OpenSHMEM 1.5 specification, for one of its
// point-to-point types: `verb` is wait_until or test, `Ret` what it and its _all form return.
#define S4BXI_FORMS(kind, verb, Ret, NAME, T)                                                                 \
    S4BXI_FORWARD(kind, Ret, shmem_##NAME##_##verb, (T * var, int cmp, T value), (var, cmp, value))            \
    S4BXI_FORWARD(kind, Ret, shmem_##NAME##_##verb##_all,                                                      \
                  (T * vars, size_t n, const int* status, int cmp, T value), (vars, n, status, cmp, value))    \
    S4BXI_FORWARD(kind, size_t, shmem_##NAME##_##verb##_any,                                                   \
                  (T * vars, size_t n, const int* status, int cmp, T value), (vars, n, status, cmp, value))    \
    S4BXI_FORWARD(kind, size_t, shmem_##NAME##_##verb##_some,                                                  \
                  (T * vars, size_t n, size_t* indices, const int* status, int cmp, T value),                  \
                  (vars, n, indices, status, cmp, value))                                                      \
    S4BXI_FORWARD(kind, Ret, shmem_##NAME##_##verb##_all_vector,                                               \
                  (T * vars, size_t n, const int* status, int cmp, T* values), (vars, n, status, cmp, values)) \
    S4BXI_FORWARD(kind, size_t, shmem_##NAME##_##verb##_any_vector,                                            \
                  (T * vars, size_t n, const int* status, int cmp, T* values), (vars, n, status, cmp, values)) \
    S4BXI_FORWARD(kind, size_t, shmem_##NAME##_##verb##_some_vector,                                           \
                  (T * vars, size_t n, size_t* indices, const int* status, int cmp, T* values),                \
                  (vars, n, indices, status, cmp, values))
#define S4BXI_SYNC_FORMS(NAME, T) S4BXI_FORMS(WAIT, wait_until, void, NAME, T) S4BXI_FORMS(TEST, test, int, NAME, T)

S4BXI_SYNC_FORMS(short, short)
S4BXI_SYNC_FORMS(int, int)
S4BXI_SYNC_FORMS(long, long)
S4BXI_SYNC_FORMS(longlong, long long)
S4BXI_SYNC_FORMS(ushort, unsigned short)
S4BXI_SYNC_FORMS(uint, unsigned int)
S4BXI_SYNC_FORMS(ulong, unsigned long)
S4BXI_SYNC_FORMS(ulonglong, unsigned long long)
S4BXI_SYNC_FORMS(int32, int32_t)
S4BXI_SYNC_FORMS(int64, int64_t)
S4BXI_SYNC_FORMS(uint32, uint32_t)
S4BXI_SYNC_FORMS(uint64, uint64_t)
S4BXI_SYNC_FORMS(size, size_t)
S4BXI_SYNC_FORMS(ptrdiff, ptrdiff_t)

// The forms before OpenSHMEM 1.4, still in SOS (deprecated).
#define S4BXI_OLD_WAIT(NAME, T) S4BXI_FORWARD(WAIT, void, shmem_##NAME##_wait, (T * var, T value), (var, value))
S4BXI_OLD_WAIT(short, short)
S4BXI_OLD_WAIT(int, int)
S4BXI_OLD_WAIT(long, long)
S4BXI_OLD_WAIT(longlong, long long)
S4BXI_FORWARD(WAIT, void, shmem_wait, (long* var, long value), (var, value))
S4BXI_FORWARD(WAIT, void, shmem_wait_until, (long* var, int cmp, long value), (var, cmp, value))
S4BXI_FORWARD(WAIT, uint64_t, shmem_signal_wait_until, (uint64_t * var, int cmp, uint64_t value), (var, cmp, value))

}  // namespace s4bxi::interpose::shmem
