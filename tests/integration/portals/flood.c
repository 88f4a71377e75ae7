/* Flow-control experiment: rank 0 floods rank 2 with Puts while ranks 1 and 3 measure a
 * ping-pong across the same switch-to-switch link. Rank 1 prints the measured one-way
 * time ("measured_one_way_ns=<t>"). Arguments: flood message size, flood count, measured
 * message size, ping-pong rounds. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 5) return 2;
    size_t flood_size = strtoul(argv[1], NULL, 0), measured_size = strtoul(argv[3], NULL, 0);
    long flood_count = atol(argv[2]), rounds = atol(argv[4]);
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    size_t size = flood_size > measured_size ? flood_size : measured_size;
    char *buffer = calloc(size, 1);
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_handle_me_t me_h;
    ptl_pt_index_t pt;
    ptl_event_t event;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, NULL, &ni);
    PtlEQAlloc(ni, 4096, &eq);
    PtlPTAlloc(ni, 0, eq, 0, &pt);
    ptl_me_t me = {buffer, size, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h);
    ptl_md_t desc = {buffer, size, 0, PTL_EQ_NONE, PTL_CT_NONE};
    PtlMDBind(ni, &desc, &md);
    ptl_process_t peer = {.phys = {rank ^ 2, 9}}; /* 0 <-> 2, 1 <-> 3: across the two switches */
    struct timespec settle = {0, 1000000};
    nanosleep(&settle, NULL); /* every entry is in place */
    if (rank == 0) {
        for (long i = 0; i < flood_count; ++i) PtlPut(md, 0, flood_size, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0);
    } else if (rank == 2) {
        for (long i = 0; i < flood_count; ++i) PtlEQWait(eq, &event);
    } else {
        struct timespec head_start = {0, 200000};
        nanosleep(&head_start, NULL); /* measure while the flood is under way */
        long long start = now_ns();
        for (long i = 0; i < rounds; ++i) {
            if (rank == 1) PtlPut(md, 0, measured_size, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0);
            PtlEQWait(eq, &event);
            if (rank == 3) PtlPut(md, 0, measured_size, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0);
        }
        if (rank == 1) printf("measured_one_way_ns=%.1f\n", (now_ns() - start) / (2.0 * rounds));
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
