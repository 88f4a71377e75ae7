/* A Put that asks for an ACK from an entry that disables them (PTL_ME_ACK_DISABLE): the
 * initiator gets its SEND and no ACK, at every size, whether the NIC runs E2E or not. A
 * Put larger than the E2E context keeps its buffer until it is acknowledged; without E2E
 * and with the Portals ACK disabled, nothing came back and the SEND never came (the
 * initiator waited for ever). Rank 0 puts 8 B, 1 KiB and 64 KiB to rank 1, waiting for
 * each SEND; rank 1 checks the bytes. Run on 2 ranks; the exit status is the verdict. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_checks.h"

#define PID 11
#define PT 4
#define BITS 0x5a
#define LARGEST 65536

static const ptl_size_t sizes[] = {8, 1024, LARGEST};
enum { PUTS = sizeof sizes / sizeof sizes[0] };

static unsigned char pattern(ptl_size_t size, ptl_size_t i) { return (unsigned char)(size * 7 + i * 13); }

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static unsigned char buffer[PUTS][LARGEST];
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_event_t event;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 64, &eq), PTL_OK);
    if (rank == 1) {
        ptl_pt_index_t pt;
        EXPECT_RC(PtlPTAlloc(ni, 0, eq, PT, &pt), PTL_OK);
        for (int i = 0; i < PUTS; ++i) {
            ptl_me_t me = {buffer[i], sizes[i], PTL_CT_NONE, PTL_UID_ANY,
                           PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_ACK_DISABLE | PTL_ME_EVENT_LINK_DISABLE |
                               PTL_ME_EVENT_UNLINK_DISABLE,
                           {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, BITS, 0, 0};
            ptl_handle_me_t handle;
            EXPECT_RC(PtlMEAppend(ni, PT, &me, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);
        }
        for (int i = 0; i < PUTS; ++i) {
            EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
            expect(event.type == PTL_EVENT_PUT && event.ni_fail_type == PTL_NI_OK, "a PUT event, delivered");
            expect(event.mlength == sizes[i], "the puts land in order, whole");
            int same = 1;
            for (ptl_size_t b = 0; b < sizes[i]; ++b) same &= buffer[i][b] == pattern(sizes[i], b);
            expect(same, "every byte is the initiator's");
        }
    } else {
        struct timespec wait = {0, 1000000};  /* rank 1's entries are in place by then */
        nanosleep(&wait, NULL);
        ptl_process_t target = {.phys = {1, PID}};
        for (int i = 0; i < PUTS; ++i) {
            for (ptl_size_t b = 0; b < sizes[i]; ++b) buffer[i][b] = pattern(sizes[i], b);
            ptl_md_t desc = {buffer[i], sizes[i], 0, eq, PTL_CT_NONE};
            ptl_handle_md_t md;
            EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
            EXPECT_RC(PtlPut(md, 0, sizes[i], PTL_ACK_REQ, target, PT, BITS, 0, NULL, 0), PTL_OK);
            EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
            expect(event.type == PTL_EVENT_SEND && event.ni_fail_type == PTL_NI_OK, "the SEND comes");
            EXPECT_RC(PtlMDRelease(md), PTL_OK);
        }
        /* An ACK would come after its SEND: give it the time of a round trip and more. */
        nanosleep(&wait, NULL);
        expect(PtlEQGet(eq, &event) == PTL_EQ_EMPTY, "no ACK: the target disabled them");
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
