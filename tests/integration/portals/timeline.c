/* One Portals operation at a time, with the simulated date of each step: rank 0 issues
 * it and prints when the call returned and when each of its events arrived; rank 1
 * prints when the target event arrived. Dates are absolute virtual times in ns (the
 * simulated clock is global), one "case=... step=... t=..." line per step. */
#define _GNU_SOURCE
#include <stdint.h>

#include "timeline_steps.h"

#define BUFFER (1 << 20)
#define PID 7

enum kind { PUT, GET, ATOMIC, FETCH, SWAP };
struct test_case {
    const char *name;
    enum kind kind;
    size_t size;
    int is_volatile;
};
static const struct test_case cases[] = {
    {"put8", PUT, 8, 0},          {"put16vol", PUT, 16, 1},   {"put64", PUT, 64, 0},
    {"put64vol", PUT, 64, 1},     {"put65", PUT, 65, 0},      {"put408vol", PUT, 408, 1},
    {"put409vol", PUT, 409, 1},   {"put512", PUT, 512, 0},    {"put1M", PUT, BUFFER, 0},
    {"get8", GET, 8, 0},          {"get512", GET, 512, 0},    {"get1M", GET, BUFFER, 0},
    {"atomic8", ATOMIC, 8, 0},    {"fetch8", FETCH, 8, 0},    {"swap8", SWAP, 8, 0},
};

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

int main(int argc, char **argv)
{
    unsigned char *buffer = calloc(BUFFER, 1);
    int rank = start(PID, &ni, &eq);
    ptl_process_t peer = {.phys = {.nid = 1, .pid = PID}};

    if (rank == 1) {
        expose_entry(ni, eq, buffer, BUFFER);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            if (!selected(argc, argv, cases[i].name)) continue;
            ptl_event_t event = next_event(eq);
            step(cases[i].name, event_name(event.type), now());
        }
        /* 0 left by the puts, +5 (atomic), +5 (fetch-atomic), CSWAP against 5: no swap. */
        int64_t result;
        memcpy(&result, buffer, sizeof result);
        printf("atomic_result=%lld\n", (long long)result);
    } else {
        ptl_md_t plain = {buffer, BUFFER, 0, eq, PTL_CT_NONE};
        ptl_md_t vol = {buffer, BUFFER, PTL_MD_VOLATILE, eq, PTL_CT_NONE};
        ptl_handle_md_t md, md_volatile;
        must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
        must_succeed(PtlMDBind(ni, &vol, &md_volatile), "PtlMDBind");
        knock(md, eq, peer);
        struct timespec quiet = {0, 1000000};
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            const struct test_case *c = &cases[i];
            if (!selected(argc, argv, c->name)) continue;
            nanosleep(&quiet, NULL); /* let the previous case drain completely */
            ptl_handle_md_t which = c->is_volatile ? md_volatile : md;
            int expected = c->kind == GET ? 1 : 2;
            int64_t compare = 5;
            if (c->kind == ATOMIC) {
                int64_t operand = 5;
                memcpy(buffer + 64, &operand, sizeof operand);
            }
            long long t0 = now();
            step(c->name, "call", t0);
            switch (c->kind) {
            case PUT: must_succeed(PtlPut(which, 0, c->size, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut"); break;
            case GET: must_succeed(PtlGet(which, 0, c->size, peer, 0, 0, 0, NULL), "PtlGet"); break;
            case ATOMIC:
                must_succeed(PtlAtomic(which, 64, c->size, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T), "PtlAtomic");
                break;
            case FETCH: /* 5 + 5 = 10, fetching the 5 */
                must_succeed(PtlFetchAtomic(which, 128, which, 64, c->size, peer, 0, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T),
                      "PtlFetchAtomic");
                break;
            case SWAP: /* the target holds 10, not 5: nothing swapped, 10 fetched */
                must_succeed(PtlSwap(which, 136, which, 64, c->size, peer, 0, 0, 0, NULL, 0, &compare, PTL_CSWAP, PTL_INT64_T),
                      "PtlSwap");
                break;
            }
            step(c->name, "return", now());
            for (int e = 0; e < expected; ++e) {
                ptl_event_t event = next_event(eq);
                step(c->name, event_name(event.type), now());
            }
        }
    }
    if (rank == 0) {
        int64_t fetched, swapped;
        memcpy(&fetched, buffer + 128, sizeof fetched);
        memcpy(&swapped, buffer + 136, sizeof swapped);
        printf("fetched=%lld swap_fetched=%lld\n", (long long)fetched, (long long)swapped);
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    return 0;
}
