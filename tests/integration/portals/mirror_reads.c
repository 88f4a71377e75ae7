/* Events and counters read from the mirror, without a round trip (docs/design.md "Polling").
 *
 * Rank 0 sends PUTS puts with acknowledgements to rank 1's counting entry, and SMALL more to
 * an entry whose event queue holds only SMALL_EQ events. Both ranks then sleep 1 ms
 * (simulated): everything has arrived before that sleep's reply, so every event and the
 * counter's value are read in the rank's own process. Each rank checks what it reads:
 * events in order, the loss on the small queue reported once (PTL_EQ_DROPPED), counters
 * with PtlCTGet, PtlCTWait and PtlCTPoll, queues with PtlEQGet, PtlEQWait and PtlEQPoll,
 * and empty polls that return at once: of another queue while events wait, and right
 * after a poll that found an event (once each). With "compute", under the measured CPU
 * model, rank 1 computes while the puts arrive and reads them all the same.
 * check_mirror_reads.py checks from the run summary that these calls made no round trip. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 44
#define PT_COUNTED 0
#define PT_SMALL 1
#define PUTS 20
#define SMALL 6
#define SMALL_EQ 4

/* With the argument "compute" (measured CPU model), rank 1 computes instead of sleeping
 * while the puts arrive. */
static int computing;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_1ms(void)
{
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
}

static void receiver(ptl_handle_ni_t ni)
{
    static char counted[64], small[64];
    ptl_handle_eq_t eq, small_eq;
    ptl_handle_ct_t ct, idle_ct;
    ptl_pt_index_t pt;
    EXPECT_RC(PtlEQAlloc(ni, 64, &eq), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, SMALL_EQ, &small_eq), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &idle_ct), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, PT_COUNTED, &pt), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, small_eq, PT_SMALL, &pt), PTL_OK);
    ptl_me_t entry =
        any_source_entry(counted, sizeof counted, ct, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_LINK_DISABLE);
    ptl_handle_me_t handle;
    EXPECT_RC(PtlMEAppend(ni, PT_COUNTED, &entry, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);
    entry = any_source_entry(small, sizeof small, PTL_CT_NONE, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE);
    EXPECT_RC(PtlMEAppend(ni, PT_SMALL, &entry, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);
    sleep_1ms();  /* ready */
    if (computing) {
        /* Everything arrives while the rank computes (measured CPU model): it reads what
         * the server wrote meanwhile. */
        long long start = now_ns();
        while (now_ns() - start < 3000000) continue;
    } else {
        sleep_1ms();  /* everything has arrived */

        /* An empty poll while events the rank has not looked at wait elsewhere returns at
         * once (the loop will find them on its next round); the next one fast-forwards. */
        ptl_handle_eq_t idle_eq;
        ptl_event_t nothing;
        EXPECT_RC(PtlEQAlloc(ni, 8, &idle_eq), PTL_OK);
        long long before = now_ns();
        EXPECT_RC(PtlEQGet(idle_eq, &nothing), PTL_EQ_EMPTY);
        expect(now_ns() == before, "an empty poll with events waiting elsewhere takes no time");
        EXPECT_RC(PtlEQGet(idle_eq, &nothing), PTL_EQ_EMPTY);
        expect(now_ns() > before, "the next empty poll fast-forwards");
    }

    /* Counters: a new value, then a satisfied wait and poll. */
    ptl_ct_event_t value;
    EXPECT_RC(PtlCTGet(ct, &value), PTL_OK);
    expect(value.success == PUTS && value.failure == 0, "PtlCTGet reads every put counted");
    EXPECT_RC(PtlCTWait(ct, PUTS, &value), PTL_OK);
    expect(value.success == PUTS, "PtlCTWait on a reached count");
    ptl_handle_ct_t both[2] = {idle_ct, ct};
    ptl_size_t tests[2] = {1, PUTS};
    unsigned int which = 9;
    EXPECT_RC(PtlCTPoll(both, tests, 2, 0, &value, &which), PTL_OK);
    expect(which == 1 && value.success == PUTS, "PtlCTPoll finds the reached counter");

    /* The counted entry's events, in order, by PtlEQGet, PtlEQWait and PtlEQPoll. */
    ptl_handle_eq_t queues[2] = {small_eq, eq};
    for (int k = 0; k < PUTS; ++k) {
        ptl_event_t event;
        int rc;
        if (k % 3 == 0) rc = PtlEQGet(eq, &event);
        else if (k % 3 == 1) rc = PtlEQWait(eq, &event);
        else {
            /* The small queue comes first in the list: leave it for later by polling the
             * counted queue alone here. */
            rc = PtlEQPoll(&queues[1], 1, 0, &event, &which);
            expect(which == 0, "PtlEQPoll names the queue");
        }
        expect(rc == PTL_OK && event.type == PTL_EVENT_PUT && event.hdr_data == (ptl_hdr_data_t)k,
               "the counted entry's events come in order");
    }
    /* The small queue: the first event taken reports the loss, once. */
    for (int k = 0; k < SMALL_EQ; ++k) {
        ptl_event_t event;
        int rc = PtlEQPoll(queues, 2, 0, &event, &which);
        expect(rc == (k == 0 ? PTL_EQ_DROPPED : PTL_OK) && which == 0 && event.hdr_data == (ptl_hdr_data_t)(100 + k),
               "the small queue's events, the first reporting the loss");
    }
    /* Right after a poll that found an event, an empty poll takes no time; the next one
     * fast-forwards. */
    ptl_event_t none;
    long long after_event = now_ns();
    EXPECT_RC(PtlEQPoll(queues, 2, 0, &none, &which), PTL_EQ_EMPTY);
    if (!computing) expect(now_ns() == after_event, "an empty poll right after an event takes no time");
    EXPECT_RC(PtlEQPoll(queues, 2, 0, &none, &which), PTL_EQ_EMPTY);
    if (!computing) expect(now_ns() > after_event, "the next empty poll fast-forwards");
}

static void sender(ptl_handle_ni_t ni, ptl_process_t peer)
{
    static char data[8];
    ptl_handle_eq_t eq;
    EXPECT_RC(PtlEQAlloc(ni, 128, &eq), PTL_OK);
    ptl_md_t md = {data, sizeof data, 0, eq, PTL_CT_NONE};
    ptl_handle_md_t md_handle;
    EXPECT_RC(PtlMDBind(ni, &md, &md_handle), PTL_OK);
    sleep_1ms();
    for (int k = 0; k < PUTS; ++k)
        EXPECT_RC(PtlPut(md_handle, 0, sizeof data, PTL_ACK_REQ, peer, PT_COUNTED, 0, 0, NULL, k), PTL_OK);
    for (int k = 0; k < SMALL; ++k)
        EXPECT_RC(PtlPut(md_handle, 0, sizeof data, PTL_NO_ACK_REQ, peer, PT_SMALL, 0, 0, NULL, 100 + k), PTL_OK);
    sleep_1ms();
    int sends = 0, acks = 0;
    for (int k = 0; k < 2 * PUTS + SMALL; ++k) {
        ptl_event_t event;
        EXPECT_RC(PtlEQGet(eq, &event), PTL_OK);
        sends += event.type == PTL_EVENT_SEND;
        acks += event.type == PTL_EVENT_ACK;
    }
    expect(sends == PUTS + SMALL && acks == PUTS, "every send and acknowledgement");
}

int main(int argc, char **argv)
{
    computing = argc > 1 && strcmp(argv[1], "compute") == 0;
    const char *rank_text = getenv("S4BXI_RANK");
    rank = rank_text ? atoi(rank_text) : 0;
    ptl_handle_ni_t ni;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    ptl_process_t self, peer;
    EXPECT_RC(PtlGetPhysId(ni, &self), PTL_OK);
    peer.phys.nid = self.phys.nid ^ 1;
    peer.phys.pid = PID;
    if (rank == 1) receiver(ni);
    else sender(ni, peer);
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
