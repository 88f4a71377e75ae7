/* Messages between two processes keep their order across network model switches
 * (docs/network-models.md): rank 0 puts COUNT messages to rank 1 back to back, 64 KiB and
 * 8 B in turn, each numbered in its header data; rank 1 checks they land in that order.
 * Run under a schedule that switches models every microsecond, a small message started
 * under the flow model just after a large one under the detailed model would land first
 * if the target's NIC did not hold it. Rank 1 prints "switch_order: COUNT in order" or the
 * first message out of order, and exits 1 then. Argument: COUNT. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { kLarge = 65536, kSmall = 8 };

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 200;
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    char *buffer = calloc(kLarge, 1);
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
    ptl_me_t me = {buffer, kLarge, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &me_h);
    ptl_md_t desc = {buffer, kLarge, PTL_MD_EVENT_SEND_DISABLE, eq, PTL_CT_NONE};
    PtlMDBind(ni, &desc, &md);
    ptl_process_t peer = {.phys = {1, 9}};
    struct timespec settle = {0, 100000};
    nanosleep(&settle, NULL); /* the target's entry is in place */
    int status = 0;
    if (rank == 0) {
        for (long i = 0; i < count; ++i)
            PtlPut(md, 0, i % 2 ? kSmall : kLarge, PTL_NO_ACK_REQ, peer, 0, 0, 0, NULL, (ptl_hdr_data_t)i);
    } else {
        long landed = 0;
        for (; landed < count; ++landed) {
            PtlEQWait(eq, &event);
            if (event.type != PTL_EVENT_PUT || event.hdr_data != (ptl_hdr_data_t)landed) break;
        }
        if (landed == count) {
            printf("switch_order: %ld in order\n", count);
        } else {
            printf("switch_order: message %ld landed where message %ld was due\n", (long)event.hdr_data, landed);
            status = 1;
        }
    }
    /* Rank 0's NI stays until its messages have landed: rank 1 ends after them. */
    if (rank == 0) nanosleep(&settle, NULL);
    PtlNIFini(ni);
    PtlFini();
    return status;
}
