/* Triggered operations: rank 1 registers a Put back to rank 0, fired by the counter of
 * its receive entry, so the answer leaves rank 1's NIC without its CPU; a triggered
 * CTInc chains counters; a cancelled trigger never fires. Rank 0 prints the simulated
 * time from its Put to the PUT event of the answer: "round_trip_ns=<n>". */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_checks.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char in[64], out[64] = "answer from the NIC";
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_pt_index_t pt;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 6, NULL, NULL, &ni);
    PtlEQAlloc(ni, 64, &eq);
    PtlPTAlloc(ni, 0, eq, 4, &pt);
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    ptl_process_t peer = {.phys = {rank ^ 1, 6}};
    ptl_md_t md_desc = {out, sizeof out, 0, PTL_EQ_NONE, PTL_CT_NONE};
    ptl_handle_md_t md;
    PtlMDBind(ni, &md_desc, &md);
    ptl_handle_me_t h;
    ptl_event_t event;
    if (rank == 1) {
        ptl_handle_ct_t received, chained, cancelled, self_chained;
        PtlCTAlloc(ni, &received);
        PtlCTAlloc(ni, &chained);
        PtlCTAlloc(ni, &cancelled);
        PtlCTAlloc(ni, &self_chained);
        /* As Open MPI's barrier does: one message raises the counter to 1, two triggered
         * increments of the same counter take it to 3 in the same instant. */
        ptl_me_t barrier = {NULL, 0, self_chained, PTL_UID_ANY,
                            PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE |
                                PTL_ME_EVENT_SUCCESS_DISABLE,
                            any, 5, 0, 0};
        PtlMEAppend(ni, 4, &barrier, PTL_PRIORITY_LIST, NULL, &h);
        PtlTriggeredCTInc(self_chained, (ptl_ct_event_t){1, 0}, self_chained, 1);
        PtlTriggeredCTInc(self_chained, (ptl_ct_event_t){1, 0}, self_chained, 2);
        ptl_me_t data = {in, sizeof in, received, PTL_UID_ANY,
                         PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE, any, 1, 0, 0};
        PtlMEAppend(ni, 4, &data, PTL_PRIORITY_LIST, NULL, &h);
        expect(PtlTriggeredPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 4, 2, 0, NULL, 0, received, 1) == PTL_OK,
               "PtlTriggeredPut registered");
        expect(PtlTriggeredCTInc(chained, (ptl_ct_event_t){5, 0}, received, 1) == PTL_OK, "PtlTriggeredCTInc registered");
        expect(PtlTriggeredPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 4, 3, 0, NULL, 0, cancelled, 1) == PTL_OK,
               "a trigger to cancel");
        expect(PtlCTCancelTriggered(cancelled) == PTL_OK, "PtlCTCancelTriggered");
        expect(PtlTriggeredPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 4, 2, 0, NULL, 0, 12345, 1) == PTL_ARG_INVALID,
               "a bad trigger counter is refused");
        ptl_me_t knock = {in, 1, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, any, 0, 0, 0};
        PtlMEAppend(ni, 4, &knock, PTL_PRIORITY_LIST, NULL, &h); /* ready */
        ptl_ct_event_t count;
        PtlCTWait(chained, 5, &count);
        expect(count.success == 5, "the triggered CTInc fired with the first message");
        PtlCTSet(cancelled, (ptl_ct_event_t){10, 0});
        PtlCTWait(received, 1, &count);
        expect(memcmp(in, "question", 9) == 0, "the question arrived");
        PtlCTWait(self_chained, 3, &count);
        expect(count.success == 3, "a waiter sees a counter its own triggers raised past the test");
    } else {
        ptl_me_t answer = {in, sizeof in, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, any, 2, 0, 0};
        PtlMEAppend(ni, 4, &answer, PTL_PRIORITY_LIST, NULL, &h);
        ptl_md_t acked_desc = {out, sizeof out, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t acked;
        PtlMDBind(ni, &acked_desc, &acked);
        for (;;) {
            PtlPut(acked, 0, 1, PTL_ACK_REQ, peer, 4, 0, 0, NULL, 0);
            do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
            if (event.ni_fail_type == PTL_NI_OK) break;
        }
        struct timespec quiet = {0, 1000000};
        nanosleep(&quiet, NULL);
        strcpy(out, "question");
        long long start = now_ns();
        PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, 4, 1, 0, NULL, 0);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_PUT);
        printf("round_trip_ns=%lld\n", now_ns() - start);
        expect(event.match_bits == 2 && memcmp(in, "answer f", 8) == 0, "the triggered Put brought rank 1's bytes");
        nanosleep(&quiet, NULL);
        expect(PtlEQGet(eq, &event) == PTL_EQ_EMPTY, "the cancelled trigger never fired");
        PtlPut(md, 0, 0, PTL_NO_ACK_REQ, peer, 4, 5, 0, NULL, 0); /* the barrier message */
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
