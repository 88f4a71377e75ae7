/* Size sweep of single Portals operations, for comparing simulators.
 *
 * Same structure as s4bxi's tests/integration/portals/timeline.c: rank 1 exposes one
 * matching ME (1 MiB, put/get/atomic allowed, LINK events disabled); rank 0 knocks until
 * that ME exists, then issues one operation at a time, 1 ms apart so that nothing
 * overlaps, and prints the simulated date of the call, of its return and of each of its
 * events; rank 1 prints the date of each target event. One line per step:
 *     case=<name> step=<call|return|SEND|ACK|REPLY|PUT|GET|ATOMIC|FETCH_ATOMIC> t=<ns>
 * Only differences between dates of one case are meaningful.
 * The rank comes from the S4BXI_RANK environment variable (0 if unset).
 * Operations: Put with PTL_ACK_REQ and Get at 8 B, 64 B, 1 KiB, 64 KiB, 1 MiB; Atomic
 * (SUM, int64) at 8 B, 64 B, 1 KiB; FetchAtomic (SUM, int64) at 8 B and 64 B (the largest
 * sizes the reference simulator's NI limits allow). Non-volatile MDs. */
#define _GNU_SOURCE
#include <stdint.h>

#include "timeline_steps.h"

#define BUFFER (2 << 20)
#define PID 9

enum kind { PUT, GET, ATOMIC, FETCH };
struct test_case {
    const char *name;
    enum kind kind;
    size_t size;
};
static const struct test_case cases[] = {
    {"put8", PUT, 8},        {"put64", PUT, 64},        {"put1K", PUT, 1024},      {"put64K", PUT, 65536},
    {"put1M", PUT, 1 << 20}, {"get8", GET, 8},          {"get64", GET, 64},        {"get1K", GET, 1024},
    {"get64K", GET, 65536},  {"get1M", GET, 1 << 20},   {"atomic8", ATOMIC, 8},    {"atomic64", ATOMIC, 64},
    {"atomic1K", ATOMIC, 1024}, {"fetch8", FETCH, 8},   {"fetch64", FETCH, 64},
};

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

/* Events rank 0 waits for: SEND and ACK for Put and Atomic (SEND comes either from the
 * NIC, <= 64 B, or with the ACK); REPLY for Get; REPLY, plus SEND when <= 64 B, for
 * FetchAtomic. */
static int initiator_events(const struct test_case *c)
{
    switch (c->kind) {
    case PUT:
    case ATOMIC: return 2;
    case GET: return 1;
    case FETCH: return c->size <= 64 ? 2 : 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    unsigned char *buffer = calloc(BUFFER, 1);
    int rank = start(PID, &ni, &eq);
    ptl_process_t peer = {.phys = {.nid = 1, .pid = PID}};

    if (rank == 1) {
        expose_entry(ni, eq, buffer, 1 << 20);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            if (!selected(argc, argv, cases[i].name)) continue;
            ptl_event_t event = next_event(eq);
            step(cases[i].name, event_name(event.type), now());
        }
    } else {
        ptl_md_t plain = {buffer, BUFFER, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
        knock(md, eq, peer);
        struct timespec quiet = {0, 1000000};
        const size_t operand = 1 << 20; /* operands and fetched values live in the upper MiB */
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            const struct test_case *c = &cases[i];
            if (!selected(argc, argv, c->name)) continue;
            nanosleep(&quiet, NULL); /* let the previous case drain completely */
            long long t0 = now();
            step(c->name, "call", t0);
            switch (c->kind) {
            case PUT: must_succeed(PtlPut(md, 0, c->size, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut"); break;
            case GET: must_succeed(PtlGet(md, 0, c->size, peer, 0, 0, 0, NULL), "PtlGet"); break;
            case ATOMIC:
                must_succeed(PtlAtomic(md, operand, c->size, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T),
                      "PtlAtomic");
                break;
            case FETCH:
                must_succeed(PtlFetchAtomic(md, operand + 4096, md, operand, c->size, peer, 0, 0, 0, NULL, 0, PTL_SUM,
                                     PTL_INT64_T),
                      "PtlFetchAtomic");
                break;
            }
            step(c->name, "return", now());
            for (int e = 0; e < initiator_events(c); ++e) {
                ptl_event_t event = next_event(eq);
                step(c->name, event_name(event.type), now());
            }
        }
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    free(buffer);
    return 0;
}
