/* A rank that waits for remote writes by reading its own memory, with no Portals call (an
 * OpenSHMEM-style wait on a flag): rank 0 spins on a flag while rank 1 puts 1, 2, 3 and 4
 * into it, one simulated millisecond apart. Rank 0 waits for each value in turn and prints
 * the date at which it saw it, and that at which the Portals calls it makes right after
 * ended. After the third, it computes for COMPUTE_CPU_MS of CPU time over memory it has
 * touched, with no call (an OpenSHMEM PE checking what it received), while the fourth is
 * on its way: under the zero CPU model that takes no simulated time, and the calls it makes
 * then end at the third's date plus their own cost, not at the fourth's. Under the measured CPU model simulated time runs while rank 0 computes
 * (docs/model.md "Polling"); under the zero CPU model the rule of docs/time.md "Waiting on
 * memory" makes each date that of the put's landing, and the calls' end a few hundred
 * nanoseconds later, the same from run to run (check_memory_waits.py). */
#define _DEFAULT_SOURCE
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

enum { PT = 4, PID = 7, FLAG_BITS = 1, READY_BITS = 2, VALUES = 4, COMPUTE_AFTER = 3, COMPUTE_CPU_MS = 20 };

#ifdef AS_OPENSHMEM
/* Built as an OpenSHMEM program would be, as far as the launcher can tell: the executable
 * defines shmem_init (not exported, as with a static libsma), so --memory-waits auto
 * applies the rule to it. */
void shmem_init(void);
void shmem_init(void) {}
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads memory it has touched already (no page fault) for `ms` of CPU time. */
static unsigned long compute(int ms)
{
    static unsigned long data[1 << 17];
    unsigned long sum = 0;
    for (size_t i = 0; i < sizeof data / sizeof *data; ++i) data[i] = i;
    double until = thread_cpu() + ms * 1e-3;
    while (thread_cpu() < until)
        for (size_t i = 0; i < sizeof data / sizeof *data; ++i) sum += data[i];
    return sum;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static volatile uint64_t flag;
    static uint64_t values[VALUES + 1] = {0, 1, 2, 3, 4};
    static char ready;
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_pt_index_t pt;
    ptl_handle_md_t md;
    ptl_handle_me_t me;
    ptl_event_t event;
    ptl_process_t peer = {.phys = {rank ^ 1, PID}};
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, PT, &pt), PTL_OK);
    ptl_md_t md_desc = {values, sizeof values, 0, eq, PTL_CT_NONE};
    EXPECT_RC(PtlMDBind(ni, &md_desc, &md), PTL_OK);
    if (rank == 0) {
        ptl_me_t flag_desc = {(void *)&flag, sizeof flag, PTL_CT_NONE, PTL_UID_ANY,
                              PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, any, FLAG_BITS, 0, 0};
        ptl_me_t ready_desc = {&ready, 1, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, any,
                               READY_BITS, 0, 0};
        EXPECT_RC(PtlMEAppend(ni, PT, &flag_desc, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);
        EXPECT_RC(PtlMEAppend(ni, PT, &ready_desc, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);
        EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
        expect(event.type == PTL_EVENT_PUT, "the writer knows the flag's entry is there");
        double start = now();
        for (uint64_t k = 1; k <= VALUES; ++k) {
            while (flag < k) __sync_synchronize();
            double seen = now() - start;
            /* A Portals call as soon as the write is seen (an OpenSHMEM PE leaving its wait
             * for the next operation): under the zero CPU model it is served at the write's
             * date, not after simulated time ran on towards the writer's next wake-up. */
            ptl_handle_md_t probe;
            EXPECT_RC(PtlMDBind(ni, &md_desc, &probe), PTL_OK);
            EXPECT_RC(PtlMDRelease(probe), PTL_OK);
            printf("rank 0 saw %llu at %.9f s, its next calls ended at %.9f s\n", (unsigned long long)k, seen,
                   now() - start);
            /* Under the measured CPU model the puts may come faster than this loop. */
            expect(flag >= k, "the value seen is at least the one waited for");
            if (k == COMPUTE_AFTER) {
                double before = now() - start;
                unsigned long sum = compute(COMPUTE_CPU_MS);
                EXPECT_RC(PtlMDBind(ni, &md_desc, &probe), PTL_OK);
                EXPECT_RC(PtlMDRelease(probe), PTL_OK);
                printf("rank 0 computed %d ms of CPU from %.9f s (sum %lu), its next calls ended at %.9f s\n",
                       COMPUTE_CPU_MS, before, sum, now() - start);
            }
        }
        expect(now() - start >= VALUES * 1e-3, "the last value is seen no earlier than the writer's 1 ms sleeps");
    } else {
        /* Until an ACK says the spinning rank's entries are there. */
        do {
            EXPECT_RC(PtlPut(md, 0, 1, PTL_ACK_REQ, peer, PT, READY_BITS, 0, NULL, 0), PTL_OK);
            do EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
            while (event.type != PTL_EVENT_ACK);
        } while (event.ni_fail_type != PTL_NI_OK && usleep(10) == 0);
        for (uint64_t k = 1; k <= VALUES; ++k) {
            usleep(1000);
            EXPECT_RC(PtlPut(md, k * sizeof(uint64_t), sizeof(uint64_t), PTL_NO_ACK_REQ, peer, PT, FLAG_BITS, 0, NULL, 0),
                      PTL_OK);
            do EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
            while (event.type != PTL_EVENT_SEND);
        }
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
