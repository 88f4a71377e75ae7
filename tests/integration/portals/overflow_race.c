/* A priority entry appended while a message lands in an overflow entry must find the
 * message: either it matches it directly or it claims its unexpected header
 * (PTL_EVENT_PUT_OVERFLOW). The overflow entries are use-once, so that every landing
 * unlinks one and writes its AUTO_UNLINK event, which takes simulated time.
 *
 * Rank 1 tells rank 0 to send, then waits a little longer each round before appending the
 * priority entry the message is for: over the rounds the append sweeps the whole landing
 * of the message, every nanosecond step of it, under --cpu-model zero. A header recorded
 * after an append that looked for it is never claimed, and the round waits for ever (the
 * launcher reports a deadlock): MPI's short messages did so, now and then, in long runs. */
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 21
#define ROUNDS 400
#define GO_BITS 0xffffffffull
#define FIRST_DELAY_NS 0
#define STEP_NS 20

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

static ptl_event_t next_event(void)
{
    ptl_event_t event;
    if (PtlEQWait(eq, &event) != PTL_OK) expect(0, "PtlEQWait");
    return event;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static uint64_t overflow_space[ROUNDS], message[ROUNDS], go;
    uint64_t payload = 42;
    int direct = 0, claimed = 0;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    ptl_process_t me;
    EXPECT_RC(PtlGetPhysId(ni, &me), PTL_OK);
    ptl_process_t peer = {.phys = {me.phys.nid ^ 1, PID}};
    EXPECT_RC(PtlEQAlloc(ni, 4096, &eq), PTL_OK);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, 0, &pt), PTL_OK);
    ptl_md_t desc = {&payload, sizeof payload, 0, PTL_EQ_NONE, PTL_CT_NONE};
    ptl_handle_md_t md;
    EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
    ptl_me_t go_entry = any_source_entry(&go, sizeof go, PTL_CT_NONE, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE);
    go_entry.match_bits = GO_BITS;
    ptl_handle_me_t handle;
    EXPECT_RC(PtlMEAppend(ni, 0, &go_entry, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);

    if (rank == 0) {
        for (int round = 0; round < ROUNDS; ++round) {
            ptl_event_t event;
            do event = next_event(); while (event.type != PTL_EVENT_PUT || event.match_bits != GO_BITS);
            EXPECT_RC(PtlPut(md, 0, sizeof payload, PTL_NO_ACK_REQ, peer, 0, (ptl_match_bits_t)round, 0, NULL, 0),
                      PTL_OK);
        }
        expect(1, "every message sent");
    } else {
                for (int round = 0; round < ROUNDS; ++round) {
            ptl_me_t overflow = any_source_entry(&overflow_space[round], sizeof(uint64_t), PTL_CT_NONE,
                                                 PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE);
            overflow.ignore_bits = ~(ptl_match_bits_t)0;
            EXPECT_RC(PtlMEAppend(ni, 0, &overflow, PTL_OVERFLOW_LIST, NULL, &handle), PTL_OK);
            ptl_event_t event;
            /* Rank 0's go entry exists once it acknowledges a knock; after that, no ACK:
             * rank 1 starts its delay as soon as the go is sent. */
            for (int knocking = round == 0; knocking;) {
                ptl_md_t ack_desc = {&payload, sizeof payload, 0, eq, PTL_CT_NONE};
                ptl_handle_md_t ack_md;
                EXPECT_RC(PtlMDBind(ni, &ack_desc, &ack_md), PTL_OK);
                EXPECT_RC(PtlPut(ack_md, 0, sizeof payload, PTL_ACK_REQ, peer, 0, GO_BITS, 0, NULL, 0), PTL_OK);
                do event = next_event(); while (event.type != PTL_EVENT_ACK);
                EXPECT_RC(PtlMDRelease(ack_md), PTL_OK);
                knocking = event.ni_fail_type != PTL_NI_OK;
                struct timespec pause = {0, 100000};
                if (knocking) nanosleep(&pause, NULL);
            }
            if (round > 0) EXPECT_RC(PtlPut(md, 0, sizeof payload, PTL_NO_ACK_REQ, peer, 0, GO_BITS, 0, NULL, 0), PTL_OK);
            struct timespec delay = {0, FIRST_DELAY_NS + round * STEP_NS};
            nanosleep(&delay, NULL);
            ptl_me_t wanted = any_source_entry(&message[round], sizeof(uint64_t), PTL_CT_NONE,
                                               PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE |
                                                   PTL_ME_EVENT_UNLINK_DISABLE);
            wanted.match_bits = (ptl_match_bits_t)round;
            EXPECT_RC(PtlMEAppend(ni, 0, &wanted, PTL_PRIORITY_LIST, &message[round], &handle), PTL_OK);
            do event = next_event();
            while (event.user_ptr != &message[round] ||
                   (event.type != PTL_EVENT_PUT && event.type != PTL_EVENT_PUT_OVERFLOW));
            if (event.ni_fail_type != PTL_NI_OK || event.match_bits != (ptl_match_bits_t)round)
                expect(0, "the round's message, whole");
            if (event.type == PTL_EVENT_PUT) ++direct;
            else ++claimed;
        }
        expect(1, "every message found by the entry appended for it");
        printf("rank 1: %d messages matched the appended entry, %d were claimed from the overflow list\n", direct,
               claimed);
        expect(direct > 0 && claimed > 0, "the appends swept the landing of the message");
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
