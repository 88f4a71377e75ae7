/* Benchmark program: a ping-pong of Portals puts between ranks 0 and 1, many round trips,
 * to measure how many simulated messages s4bxi processes per second of wall time and what
 * it keeps in memory. Usage: message_rate [ROUNDS [BYTES]] (10000 rounds of 8 bytes by
 * default). Every PTL_EVENT_PUT is checked for its length; the payload is not touched, so
 * that the program's own work stays out of the figures. Rank 0 prints the time its loop
 * took as CLOCK_MONOTONIC tells (simulated time under a simulator). */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "message_rate: %s failed: %d\n", what, rc);
        exit(1);
    }
}

static double seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    long bytes = argc > 2 ? atol(argv[2]) : 8;
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    char *buffer = calloc(bytes > 0 ? bytes : 1, 1);
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_handle_me_t me_h;
    ptl_pt_index_t pt;
    ptl_event_t event;
    if (!buffer || rounds < 0 || bytes < 1) {
        fprintf(stderr, "usage: message_rate [ROUNDS [BYTES]]\n");
        return 2;
    }
    check(PtlInit(), "PtlInit");
    check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 11, NULL, NULL, &ni), "PtlNIInit");
    check(PtlEQAlloc(ni, 256, &eq), "PtlEQAlloc");
    check(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
    ptl_me_t me = {buffer, (ptl_size_t)bytes, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    check(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h), "PtlMEAppend");
    ptl_md_t desc = {buffer, (ptl_size_t)bytes, 0, eq, PTL_CT_NONE};
    check(PtlMDBind(ni, &desc, &md), "PtlMDBind");
    ptl_process_t peer = {.phys = {rank ^ 1, 11}};
    if (rank == 0) { /* knock until the peer is ready */
        do {
            PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0);
            do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
        } while (event.ni_fail_type != PTL_NI_OK);
    } else {
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_PUT);
    }
    double start = seconds();
    for (long i = 0; i < rounds; ++i) {
        if (rank == 0) check(PtlPut(md, 0, bytes, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
        do check(PtlEQWait(eq, &event), "PtlEQWait"); while (event.type != PTL_EVENT_PUT);
        if (event.mlength != (ptl_size_t)bytes || event.ni_fail_type != PTL_NI_OK) {
            fprintf(stderr, "message_rate: round %ld: a PUT event of %lu bytes, failure %d\n", i,
                    (unsigned long)event.mlength, event.ni_fail_type);
            return 1;
        }
        if (rank == 1) check(PtlPut(md, 0, bytes, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
    }
    if (rank == 0)
        printf("message_rate: ok: %ld round trips of %ld B, loop %.9f s\n", rounds, bytes, seconds() - start);
    PtlNIFini(ni);
    PtlFini();
    free(buffer);
    return 0;
}
