// Posts malformed requests straight into this rank's shared-memory slot, bypassing the
// library: unknown operations, absurd sleeps, garbage handles, oversized counts. Every one
// must be answered with an error and the server must stay up: a normal Portals call
// afterwards still works.
#include <portals4.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "s4bxi/wire.hpp"

namespace wire = s4bxi::wire;

template <class T>
T* find_mapping(const char* name)
{
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find(name) != std::string::npos) return reinterpret_cast<T*>(std::stoull(line, nullptr, 16));
    return nullptr;
}

static int failures = 0;

static int32_t post(wire::Slot* slot, wire::Doorbell* bell, uint32_t op, const void* args, size_t size)
{
    std::memset(slot->request.args, 0xA5, sizeof slot->request.args);
    if (args) std::memcpy(slot->request.args, args, size);
    slot->request.op = op;
    slot->request.seq += 1;
    slot->request.cpu_ns = 0;
    slot->state.store(static_cast<uint32_t>(wire::SlotState::Posted));
    bell->count.fetch_add(1);
    syscall(SYS_futex, &bell->count, FUTEX_WAKE, 1, nullptr, nullptr, 0);
    while (slot->state.load() != static_cast<uint32_t>(wire::SlotState::Replied)) {}
    int32_t rc = slot->reply.rc;
    slot->state.store(static_cast<uint32_t>(wire::SlotState::Idle));
    return rc;
}

static void expect_error(const char* what, int32_t rc)
{
    std::printf("%s: rc %d %s\n", what, rc, rc != PTL_OK ? "rejected" : "ACCEPTED");
    failures += rc == PTL_OK;
}

int main()
{
    auto* slot = find_mapping<wire::Slot>("s4bxi-slot");
    auto* bell = find_mapping<wire::Doorbell>("s4bxi-doorbell");
    if (!slot || !bell) {
        std::puts("channel not mapped: not run under s4bxi-launch?");
        return 2;
    }
    expect_error("unknown operation", post(slot, bell, 9999, nullptr, 0));
    expect_error("operation 0", post(slot, bell, 0, nullptr, 0));
    wire::SleepArgs nan_sleep{std::nan("")};
    expect_error("sleep of NaN seconds", post(slot, bell, static_cast<uint32_t>(wire::Op::Sleep), &nan_sleep, sizeof nan_sleep));
    wire::SleepArgs negative{-3};
    expect_error("negative sleep", post(slot, bell, static_cast<uint32_t>(wire::Op::Sleep), &negative, sizeof negative));
    // Portals before PtlInit, then after it with garbage handles and counts.
    expect_error("PtlNIInit before PtlInit", post(slot, bell, static_cast<uint32_t>(wire::Op::PtlNIInit), nullptr, 0));
    if (PtlInit() != PTL_OK) return 3;
    for (wire::Op op : {wire::Op::PtlNIFini, wire::Op::PtlEQGet, wire::Op::PtlEQWait, wire::Op::PtlCTWait,
                        wire::Op::PtlMDRelease, wire::Op::PtlMEUnlink, wire::Op::PtlPut, wire::Op::PtlGet,
                        wire::Op::PtlAtomic, wire::Op::PtlMEAppend, wire::Op::PtlMDBind, wire::Op::PtlPTAlloc,
                        wire::Op::PtlEQPoll, wire::Op::PtlCTPoll, wire::Op::PtlCTSet, wire::Op::PtlGetId}) {
        char what[64];
        std::snprintf(what, sizeof what, "garbage arguments to operation %u", static_cast<unsigned>(op));
        expect_error(what, post(slot, bell, static_cast<uint32_t>(op), nullptr, 0));
    }
    wire::EQPollArgs poll{};
    poll.size = 1u << 30;
    expect_error("PtlEQPoll on 2^30 queues", post(slot, bell, static_cast<uint32_t>(wire::Op::PtlEQPoll), &poll, sizeof poll));
    wire::TextArgs text{};
    text.length = 1u << 31;
    std::memset(text.text, 'x', sizeof text.text);
    post(slot, bell, static_cast<uint32_t>(wire::Op::Backtrace), &text, sizeof text);  // must not overread

    // The server is still there and still right.
    ptl_handle_ni_t ni;
    if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, nullptr, nullptr, &ni) != PTL_OK) {
        std::puts("the server no longer serves Portals calls");
        return 4;
    }
    PtlNIFini(ni);
    PtlFini();
    std::printf("%d malformed requests accepted\n", failures);
    return failures ? 1 : 0;
}
