/* Counting events waited for by busy polling PtlCTGet, as SHMEM libraries do.
 *
 * Rank 1 counts the puts reaching its entry on a CT; rank 0 sleeps 1 ms (simulated), then
 * sends ROUNDS puts, each after the previous one was counted (rank 1 answers with a put to
 * rank 0's counting entry). Rank 1 prints the simulated time at which each count was seen.
 * By default the counters are waited for with PtlCTWait; with the argument "poll", by
 * looping on PtlCTGet. Under --cpu-model zero both must print the same times: an unchanged
 * PtlCTGet fast-forwards to the counter's change instead of spinning with time frozen. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entries.h"

#include "../test_checks.h"

#define PID 43
#define PT 0
#define ROUNDS 5

static int polling;

static void wait_count(ptl_handle_ct_t ct, ptl_size_t count)
{
    ptl_ct_event_t value;
    if (!polling) {
        MUST_SUCCEED(PtlCTWait(ct, count, &value));
    } else {
        do MUST_SUCCEED(PtlCTGet(ct, &value));
        while (value.success < count && value.failure == 0);
    }
    if (value.failure != 0) {
        fprintf(stderr, "ct_polling: %llu failures\n", (unsigned long long)value.failure);
        exit(3);
    }
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    polling = argc > 1 && strcmp(argv[1], "poll") == 0;
    const char *rank_text = getenv("S4BXI_RANK");
    int rank = rank_text ? atoi(rank_text) : 0;
    static char buffer[64];

    ptl_handle_ni_t ni;
    MUST_SUCCEED(PtlInit());
    MUST_SUCCEED(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni));
    ptl_process_t me, peer;
    MUST_SUCCEED(PtlGetPhysId(ni, &me));
    peer.phys.nid = me.phys.nid ^ 1;
    peer.phys.pid = PID;
    ptl_pt_index_t pt;
    MUST_SUCCEED(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt));
    ptl_handle_ct_t ct;
    MUST_SUCCEED(PtlCTAlloc(ni, &ct));
    ptl_me_t entry = any_source_entry(buffer, sizeof buffer, ct, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM);
    ptl_handle_me_t me_handle;
    MUST_SUCCEED(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me_handle));
    ptl_md_t descriptor = {buffer, sizeof buffer, 0, PTL_EQ_NONE, PTL_CT_NONE};
    ptl_handle_md_t md;
    MUST_SUCCEED(PtlMDBind(ni, &descriptor, &md));

    /* Both entries are appended before either rank sends: rank 0 sleeps first. */
    if (rank == 0) {
        struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
        for (int round = 1; round <= ROUNDS; ++round) {
            MUST_SUCCEED(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, PT, 0, 0, NULL, 0));
            wait_count(ct, (ptl_size_t)round);
        }
    } else {
        for (int round = 1; round <= ROUNDS; ++round) {
            wait_count(ct, (ptl_size_t)round);
            printf("ct_polling round=%d seen_ns=%lld\n", round, now_ns());
            MUST_SUCCEED(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, PT, 0, 0, NULL, 0));
        }
    }
    MUST_SUCCEED(PtlMDRelease(md));
    MUST_SUCCEED(PtlMEUnlink(me_handle));
    MUST_SUCCEED(PtlCTFree(ct));
    MUST_SUCCEED(PtlPTFree(ni, pt));
    MUST_SUCCEED(PtlNIFini(ni));
    PtlFini();
    return 0;
}
