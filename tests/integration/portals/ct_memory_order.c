/* A counted Put's bytes are in memory when its count is visible (what OpenSHMEM's
 * shmem_wait_until relies on). Rank 0 puts 1, 2, ... N into one word of rank 1, each with
 * an acknowledgement, and waits for rank 1 to say it saw the value before the next Put.
 * Rank 1 waits for each value as SOS does: PtlCTGet, read the word, wait for one more
 * count (PtlCTPoll in odd rounds, PtlCTWait in even ones), and again. A count visible
 * before its bytes fails at once; a delivered count never seen hangs (the launcher
 * reports the deadlock). With "progress", each rank also runs a thread that polls a
 * counter of its own meanwhile (PtlCTGet, then PtlCTPoll with a 1 ms timeout), as a
 * runtime's progress thread does: the rank's threads share its channel with the waits
 * above (a request of one served twice answered the other's next one).
 * usage: ct_memory_order [N [progress]] (default 2000); run on 2 ranks. */
#include <pmi.h>
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

#define PID 8
#define DATA_PT 1
#define SEEN_PT 2

static ptl_handle_ct_t idle_ct;  /* nothing counts on it: the progress thread's polls time out */
static volatile int done;

static void* progress(void* arg)
{
    (void)arg;
    while (!done) {
        ptl_ct_event_t count;
        ptl_size_t test = 1;
        unsigned int which;
        must_succeed(PtlCTGet(idle_ct, &count), "PtlCTGet (progress)");
        int rc = PtlCTPoll(&idle_ct, &test, 1, 1, &count, &which);
        if (rc != PTL_CT_NONE_REACHED) must_succeed(rc, "PtlCTPoll (progress)");
    }
    return NULL;
}

int main(int argc, char** argv)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000;
    int with_progress = argc > 2 && strcmp(argv[2], "progress") == 0;
    static volatile uint64_t word;   /* rank 1: the counted Puts land here */
    static uint64_t value, seen;     /* rank 0: what it puts; rank 1: what it sends back */
    ptl_handle_ni_t ni;
    ptl_handle_ct_t in_ct, ack_ct;
    ptl_handle_md_t md;
    ptl_handle_le_t le;
    ptl_pt_index_t pt;
    ptl_ct_event_t count;

    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), "PtlNIInit");
    must_succeed(PtlCTAlloc(ni, &in_ct), "PtlCTAlloc");
    must_succeed(PtlCTAlloc(ni, &ack_ct), "PtlCTAlloc");
    must_succeed(PtlCTAlloc(ni, &idle_ct), "PtlCTAlloc");
    /* What the peer puts into this rank is counted on in_ct (PTL_LE_EVENT_CT_COMM). */
    must_succeed(PtlPTAlloc(ni, 0, PTL_EQ_NONE, rank == 1 ? DATA_PT : SEEN_PT, &pt), "PtlPTAlloc");
    ptl_le_t target = {(void*)&word, sizeof word, in_ct, PTL_UID_ANY,
                       PTL_LE_OP_PUT | PTL_LE_EVENT_CT_COMM | PTL_LE_EVENT_COMM_DISABLE | PTL_LE_EVENT_LINK_DISABLE};
    must_succeed(PtlLEAppend(ni, pt, &target, PTL_PRIORITY_LIST, NULL, &le), "PtlLEAppend");
    ptl_md_t desc = {rank == 0 ? &value : &seen, sizeof value, PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, ack_ct};
    must_succeed(PtlMDBind(ni, &desc, &md), "PtlMDBind");
    ptl_process_t peer = {.phys = {(ptl_nid_t)(rank ^ 1), PID}};
    int spawned;
    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Barrier() != PMI_SUCCESS) {  /* both entries are appended */
        fprintf(stderr, "ct_memory_order: PMI barrier failed\n");
        return 2;
    }
    pthread_t progress_thread;
    if (with_progress && pthread_create(&progress_thread, NULL, progress, NULL) != 0) {
        fprintf(stderr, "ct_memory_order: pthread_create failed\n");
        return 2;
    }

    for (uint64_t i = 1; i <= rounds; ++i) {
        if (rank == 0) {
            value = i;
            must_succeed(PtlPut(md, 0, sizeof value, PTL_CT_ACK_REQ, peer, DATA_PT, 0, 0, NULL, 0), "PtlPut");
            must_succeed(PtlCTWait(ack_ct, i, &count), "PtlCTWait (ACK)");
            if (count.failure) {
                fprintf(stderr, "ct_memory_order: Put %llu failed\n", (unsigned long long)i);
                return 1;
            }
            must_succeed(PtlCTWait(in_ct, i, &count), "PtlCTWait (seen)");
        } else {
            /* shmem_wait_until(&word, SHMEM_CMP_EQ, i) over Portals */
            while (1) {
                must_succeed(PtlCTGet(in_ct, &count), "PtlCTGet");
                if (word == i) break;
                if (word > i || count.success >= i) {
                    fprintf(stderr, "ct_memory_order: round %llu: counter at %llu, word %llu\n",
                            (unsigned long long)i, (unsigned long long)count.success, (unsigned long long)word);
                    return 1;
                }
                ptl_size_t test = count.success + 1;
                unsigned int which;
                if (i % 2) must_succeed(PtlCTPoll(&in_ct, &test, 1, PTL_TIME_FOREVER, &count, &which), "PtlCTPoll");
                else must_succeed(PtlCTWait(in_ct, test, &count), "PtlCTWait");
            }
            seen = i;
            must_succeed(PtlPut(md, 0, sizeof seen, PTL_NO_ACK_REQ, peer, SEEN_PT, 0, 0, NULL, 0), "PtlPut (seen)");
        }
    }
    if (with_progress) {
        done = 1;
        pthread_join(progress_thread, NULL);
    }
    PtlNIFini(ni);
    PtlFini();
    printf("ct_memory_order: rank %d: %llu rounds\n", rank, (unsigned long long)rounds);
    return 0;
}
