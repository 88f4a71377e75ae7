/* Benchmark program: a ping-pong of small Portals puts, many round trips, to measure how
 * many simulated messages s4bxi processes per second of wall time. Usage: message_rate N. */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char buffer[8];
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_handle_me_t me_h;
    ptl_pt_index_t pt;
    ptl_event_t event;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 11, NULL, NULL, &ni);
    PtlEQAlloc(ni, 256, &eq);
    PtlPTAlloc(ni, 0, eq, 0, &pt);
    ptl_me_t me = {buffer, sizeof buffer, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h);
    ptl_md_t desc = {buffer, sizeof buffer, 0, eq, PTL_CT_NONE};
    PtlMDBind(ni, &desc, &md);
    ptl_process_t peer = {.phys = {rank ^ 1, 11}};
    if (rank == 0) { /* knock until the peer is ready */
        do {
            PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0);
            do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
        } while (event.ni_fail_type != PTL_NI_OK);
    } else {
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_PUT);
    }
    for (long i = 0; i < rounds; ++i) {
        if (rank == 0) PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_PUT);
        if (rank == 1) PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, 0);
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
