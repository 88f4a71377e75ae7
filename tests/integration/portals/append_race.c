/* A priority entry appended while messages keep arriving: the headers already in the
 * unexpected list are claimed (PUT_OVERFLOW events, counted with PTL_ME_EVENT_CT_OVERFLOW)
 * and every later message matches the new entry (PTL_ME_EVENT_CT_COMM), including those
 * that arrive while the NIC is still writing the claimed headers' events. The counter
 * must reach the number of messages sent; a message that fell into the overflow list
 * behind the search would leave it short, as coll/portals4's barrier found.
 *
 * Rank 0 streams MESSAGES zero-byte puts without waiting, after a PMI barrier at which
 * rank 1's overflow entry is there (its set-up is the host's CPU time under the measured
 * CPU model, which a loaded machine can stretch past any fixed simulated delay); rank 1
 * appends its entry as soon as the first one has landed in the overflow list. */
#include <pmi.h>
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../test_checks.h"

enum { MESSAGES = 64, PT = 3, PID = 9 };


int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    int spawned;
    expect(PMI_Init(&spawned) == PMI_SUCCESS, "PMI_Init");
    PtlInit();
    expect(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni) == PTL_OK, "NI");
    expect(PtlEQAlloc(ni, 4 * MESSAGES, &eq) == PTL_OK, "EQ");
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    if (rank == 1) {
        ptl_pt_index_t pt;
        expect(PtlPTAlloc(ni, 0, eq, PT, &pt) == PTL_OK, "PT");
        ptl_me_t bucket = {NULL, 0, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, any, 0, ~0ull, 0};
        ptl_handle_me_t h;
        expect(PtlMEAppend(ni, PT, &bucket, PTL_OVERFLOW_LIST, NULL, &h) == PTL_OK, "overflow entry");
        expect(PMI_Barrier() == PMI_SUCCESS, "PMI_Barrier");
        ptl_event_t event;
        expect(PtlEQWait(eq, &event) == PTL_OK && event.type == PTL_EVENT_PUT && event.ptl_list == PTL_OVERFLOW_LIST,
               "the first message lands in the overflow list");
        ptl_handle_ct_t ct;
        expect(PtlCTAlloc(ni, &ct) == PTL_OK, "CT");
        ptl_me_t wanted = {NULL, 0, ct, PTL_UID_ANY,
                           PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_CT_OVERFLOW | PTL_ME_EVENT_LINK_DISABLE,
                           any, 0, ~0ull, 0};
        expect(PtlMEAppend(ni, PT, &wanted, PTL_PRIORITY_LIST, NULL, &h) == PTL_OK, "priority entry");
        ptl_ct_event_t count;
        expect(PtlCTWait(ct, MESSAGES, &count) == PTL_OK && count.success == MESSAGES && count.failure == 0,
               "every message is counted by the priority entry, claimed or matched");
        int overflow = 0, claimed = 0;
        while (PtlEQGet(eq, &event) == PTL_OK) {
            if (event.type == PTL_EVENT_PUT && event.ptl_list == PTL_OVERFLOW_LIST) ++overflow;
            if (event.type == PTL_EVENT_PUT_OVERFLOW) ++claimed;
        }
        printf("rank 1: %d more in the overflow list, %d claimed at append\n", overflow, claimed);
        expect(claimed == overflow + 1, "each message of the overflow list was claimed once");
        expect(claimed > 1 && claimed < MESSAGES, "the append happened in the middle of the stream");
    } else {
        ptl_handle_ct_t sent;
        expect(PtlCTAlloc(ni, &sent) == PTL_OK, "CT");
        ptl_md_t desc = {NULL, 0, PTL_MD_EVENT_CT_SEND, PTL_EQ_NONE, sent};
        ptl_handle_md_t md;
        expect(PtlMDBind(ni, &desc, &md) == PTL_OK, "MD");
        expect(PMI_Barrier() == PMI_SUCCESS, "PMI_Barrier");
        usleep(1000); /* simulated: rank 1's entry has reached its NIC */
        ptl_process_t peer = {.phys = {1, PID}};
        for (int i = 0; i < MESSAGES; ++i)
            if (PtlPut(md, 0, 0, PTL_NO_ACK_REQ, peer, PT, 0, 0, NULL, 0) != PTL_OK) expect(0, "PtlPut");
        ptl_ct_event_t count;
        expect(PtlCTWait(sent, MESSAGES, &count) == PTL_OK && count.failure == 0, "every put has left");
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
