/* A burst of 40 Puts of 8 bytes with PTL_ACK_REQ, issued back to back: prints when each
 * call returned, relative to the first call ("put <k> return_ns=<t>"), to show the NIC
 * command queue filling up and the CPU then held at the TX engine's rate. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COUNT 40

static long long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char buffer[64];
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_event_t event;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 3, NULL, NULL, &ni);
    PtlEQAlloc(ni, 1024, &eq);
    ptl_process_t peer = {.phys = {1, 3}};
    if (rank == 1) {
        ptl_pt_index_t pt;
        PtlPTAlloc(ni, 0, eq, 0, &pt);
        ptl_me_t me = {buffer, sizeof buffer, PTL_CT_NONE, PTL_UID_ANY,
                       PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE,
                       {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
        ptl_handle_me_t h;
        PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &h);
        ptl_handle_ct_t unused;
        PtlCTAlloc(ni, &unused);
        struct timespec long_enough = {0, 5000000};
        nanosleep(&long_enough, NULL); /* the burst and its ACKs are over by then */
    } else {
        ptl_md_t desc = {buffer, sizeof buffer, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        PtlMDBind(ni, &desc, &md);
        struct timespec ready = {0, 1000000};
        nanosleep(&ready, NULL); /* rank 1's entry is in place */
        long long start = now(), returned[COUNT];
        for (int k = 0; k < COUNT; ++k) {
            PtlPut(md, 0, 8, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0);
            returned[k] = now() - start;
        }
        int acks = 0;
        while (acks < COUNT) {
            PtlEQWait(eq, &event);
            if (event.type == PTL_EVENT_ACK && event.ni_fail_type == PTL_NI_OK) ++acks;
        }
        for (int k = 0; k < COUNT; ++k) printf("put %d return_ns=%lld\n", k, returned[k]);
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
