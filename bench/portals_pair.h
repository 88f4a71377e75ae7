/* What the two-rank Portals benchmarks share (message_rate.c, put_stream.c): the checks,
 * the clock, and a pair of ranks 0 and 1 each with a matching NI, an EQ, one persistent ME
 * on portal 0 and an MD over the same buffer, rank 0 knocking until rank 1 is ready. */
#ifndef S4BXI_BENCH_PORTALS_PAIR_H
#define S4BXI_BENCH_PORTALS_PAIR_H

#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct portals_pair {
    int rank;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_process_t peer;
};

static void pair_check(int rc, const char *program, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "%s: %s failed: %d\n", program, what, rc);
        exit(1);
    }
}

static double pair_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

/* Sets up `pair` over `buffer` of `bytes` with an EQ of `eq_size` events; returns when both
 * ranks are ready. */
static void pair_setup(struct portals_pair *pair, const char *program, char *buffer, long bytes, unsigned eq_size)
{
    ptl_handle_me_t me_h;
    ptl_pt_index_t pt;
    ptl_event_t event;
    pair->rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    pair_check(PtlInit(), program, "PtlInit");
    pair_check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 11, NULL, NULL, &pair->ni), program,
               "PtlNIInit");
    pair_check(PtlEQAlloc(pair->ni, eq_size, &pair->eq), program, "PtlEQAlloc");
    pair_check(PtlPTAlloc(pair->ni, 0, pair->eq, 0, &pt), program, "PtlPTAlloc");
    ptl_me_t me = {buffer, (ptl_size_t)bytes, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    pair_check(PtlMEAppend(pair->ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h), program, "PtlMEAppend");
    ptl_md_t desc = {buffer, (ptl_size_t)bytes, 0, pair->eq, PTL_CT_NONE};
    pair_check(PtlMDBind(pair->ni, &desc, &pair->md), program, "PtlMDBind");
    pair->peer = (ptl_process_t){.phys = {pair->rank ^ 1, 11}};
    if (pair->rank == 0) { /* knock until the peer is ready */
        do {
            PtlPut(pair->md, 0, 1, PTL_ACK_REQ, pair->peer, 0, 0, 0, NULL, 0);
            do PtlEQWait(pair->eq, &event); while (event.type != PTL_EVENT_ACK);
        } while (event.ni_fail_type != PTL_NI_OK);
    } else {
        do PtlEQWait(pair->eq, &event); while (event.type != PTL_EVENT_PUT);
    }
}

#endif
