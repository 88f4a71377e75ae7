/* A sender that retries until its target exists. Rank 1 puts a hello to rank 0 with
 * PTL_CT_ACK_REQ and polls its counter with a timeout: success means delivered; a failure
 * (rank 0 has no NI yet: the Put is refused) means set the counter back to zero, wait
 * 20 ms and send again. Rank 0 sleeps 1 ms (simulated) before its PtlNIInit, appends an
 * entry counted on a counter and waits for the hello. A refused Put that counted a success
 * too told rank 1 its hello had arrived: rank 1 left, rank 0 waited in vain.
 * Run on 2 ranks under the zero CPU model; the exit status is the verdict. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_checks.h"

#define PID 9
#define PT 3
#define BITS 0x11
#define ATTEMPTS 10

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char hello[] = "hello", received[sizeof hello];
    ptl_handle_ni_t ni;
    ptl_handle_ct_t ct;
    ptl_ct_event_t count;
    unsigned int which;
    const ptl_size_t one = 1;
    EXPECT_RC(PtlInit(), PTL_OK);
    if (rank == 0) {
        pause_ms(1);  /* rank 1's first hello comes before this NI */
        EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
        EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
        ptl_pt_index_t pt;
        EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
        ptl_me_t me = {received, sizeof received, ct, PTL_UID_ANY,
                       PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE,
                       {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, BITS, 0, 0};
        ptl_handle_me_t me_handle;
        EXPECT_RC(PtlMEAppend(ni, PT, &me, PTL_PRIORITY_LIST, NULL, &me_handle), PTL_OK);
        EXPECT_RC(PtlCTPoll(&ct, &one, 1, 1000, &count, &which), PTL_OK);
        expect(count.success == 1 && count.failure == 0, "rank 0 received the hello");
        expect(strcmp(received, hello) == 0, "the hello's bytes are there");
    } else {
        EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
        EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
        ptl_md_t desc = {hello, sizeof hello, PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, ct};
        ptl_handle_md_t md;
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        ptl_process_t target = {.phys = {0, PID}};
        int attempts = 0, delivered = 0;
        while (!delivered && attempts < ATTEMPTS) {
            ++attempts;
            EXPECT_RC(PtlPut(md, 0, sizeof hello, PTL_CT_ACK_REQ, target, PT, BITS, 0, NULL, 0), PTL_OK);
            EXPECT_RC(PtlCTPoll(&ct, &one, 1, 100, &count, &which), PTL_OK);
            if (count.success > 0) {
                expect(count.failure == 0, "a delivered hello counts no failure");
                delivered = 1;
            } else {
                expect(count.failure == 1, "a refused hello counts one failure and no success");
                EXPECT_RC(PtlCTSet(ct, (ptl_ct_event_t){0, 0}), PTL_OK);
                pause_ms(20);
            }
        }
        expect(attempts >= 2, "the first hello, sent before rank 0's NI, was refused");
        expect(delivered, "a later hello was delivered");
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
