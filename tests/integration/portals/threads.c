/* Portals calls from several threads of a rank at once: they take turns at the rank's one
 * channel. Rank 0 starts THREADS threads; each binds its own MD (its own event queue, and a
 * counter of acknowledgements), puts PUTS values into its own part of rank 1's buffer, and
 * waits for its SEND events with PtlEQGet and for its acknowledgements with PtlCTGet, all
 * while the other threads call too. Rank 1 waits with PtlCTWait until every put arrived,
 * then checks every value. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 45
#define PT 0
#define THREADS 4
#define PUTS 100

static ptl_handle_ni_t ni;
static ptl_process_t peer;

static void failed(uint64_t thread, const char *what, int rc)
{
    printf("rank 0 thread %llu: %s returned %d\n", (unsigned long long)thread, what, rc);
    fflush(stdout);
    __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
}

static void *sender(void *arg)
{
    uint64_t thread = (uint64_t)(uintptr_t)arg;
    uint64_t values[PUTS];
    ptl_handle_eq_t eq;
    ptl_handle_ct_t acks;
    ptl_handle_md_t md;
    int rc;
    if ((rc = PtlEQAlloc(ni, 2 * PUTS, &eq)) != PTL_OK || (rc = PtlCTAlloc(ni, &acks)) != PTL_OK) {
        failed(thread, "PtlEQAlloc or PtlCTAlloc", rc);
        return NULL;
    }
    for (int k = 0; k < PUTS; ++k) values[k] = thread * 1000 + k;
    ptl_md_t description = {values, sizeof values, PTL_MD_EVENT_CT_ACK, eq, acks};
    if ((rc = PtlMDBind(ni, &description, &md)) != PTL_OK) {
        failed(thread, "PtlMDBind", rc);
        return NULL;
    }
    for (int k = 0; k < PUTS; ++k)
        if ((rc = PtlPut(md, k * sizeof(uint64_t), sizeof(uint64_t), PTL_CT_ACK_REQ, peer, PT, 0,
                         (thread * PUTS + k) * sizeof(uint64_t), NULL, 0)) != PTL_OK)
            failed(thread, "PtlPut", rc);
    int sends = 0;
    while (sends < PUTS) {
        ptl_event_t event;
        rc = PtlEQGet(eq, &event);
        if (rc == PTL_OK && event.type == PTL_EVENT_SEND) ++sends;
        else if (rc != PTL_EQ_EMPTY) {
            failed(thread, rc == PTL_OK ? "PtlEQGet (an event other than SEND)" : "PtlEQGet", rc == PTL_OK ? event.type : rc);
            break;
        }
    }
    ptl_ct_event_t count = {0, 0};
    while (count.success < PUTS && count.failure == 0)
        if ((rc = PtlCTGet(acks, &count)) != PTL_OK) {
            failed(thread, "PtlCTGet", rc);
            break;
        }
    if (count.success != PUTS || count.failure != 0) failed(thread, "the count of acknowledgements", (int)count.success);
    return NULL;
}

int main(void)
{
    const char *rank_text = getenv("S4BXI_RANK");
    rank = rank_text ? atoi(rank_text) : 0;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    ptl_process_t self;
    EXPECT_RC(PtlGetPhysId(ni, &self), PTL_OK);
    peer.phys.nid = self.phys.nid ^ 1;
    peer.phys.pid = PID;
    if (rank == 1) {
        static uint64_t buffer[THREADS * PUTS];
        ptl_handle_ct_t arrived;
        ptl_pt_index_t pt;
        EXPECT_RC(PtlCTAlloc(ni, &arrived), PTL_OK);
        EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
        ptl_me_t entry = any_source_entry(buffer, sizeof buffer, arrived, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM);
        ptl_handle_me_t handle;
        EXPECT_RC(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);
        ptl_ct_event_t count;
        EXPECT_RC(PtlCTWait(arrived, THREADS * PUTS, &count), PTL_OK);
        int wrong = 0;
        for (uint64_t t = 0; t < THREADS; ++t)
            for (uint64_t k = 0; k < PUTS; ++k) wrong += buffer[t * PUTS + k] != t * 1000 + k;
        expect(count.success == THREADS * PUTS && wrong == 0, "every thread's puts arrived, every value right");
    } else {
        /* Rank 1 sets up its entry meanwhile (simulated time: cheap in wall time). */
        struct timespec ready = {0, 10000000};
        nanosleep(&ready, NULL);
        pthread_t threads[THREADS];
        for (uintptr_t t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, sender, (void *)t);
        for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
        expect(failures == 0, "every thread's calls succeeded, its sends and acknowledgements counted");
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
