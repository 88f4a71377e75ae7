/* Ranks that spin on their own memory for a remote write, in a ring (SOS's
 * c11_shmem_test_all_any_some: each PE puts to the next one, then spins until its
 * predecessor's put lands). Under the measured CPU model the spin is computation; with
 * more ranks than cores, a rank that ran ahead of the others while they waited for a core
 * turned its spinning into simulated time. Each round, every rank puts the round's number
 * into the next rank's word and spins (no Portals call) until its own word holds it.
 * Prints the loop's simulated time (CLOCK_MONOTONIC); check_spin_ring.py bounds it.
 * usage: spin_ring [ROUNDS] (default 20) on any number of ranks */
#define _POSIX_C_SOURCE 200809L
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../test_checks.h"

#define PID 49
#define PT 0

int main(int argc, char** argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20;
    static volatile uint64_t word;  /* the predecessor puts here */
    static uint64_t value;          /* what this rank puts */
    ptl_handle_ni_t ni;
    ptl_handle_md_t md;
    ptl_handle_le_t le;
    ptl_pt_index_t pt;
    int spawned, rank, size;
    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS || PMI_Get_size(&size) != PMI_SUCCESS) {
        fprintf(stderr, "spin_ring: PMI failed\n");
        return 2;
    }
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), "PtlNIInit");
    must_succeed(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), "PtlPTAlloc");
    ptl_le_t target = {(void*)&word, sizeof word, PTL_CT_NONE, PTL_UID_ANY,
                       PTL_LE_OP_PUT | PTL_LE_EVENT_COMM_DISABLE | PTL_LE_EVENT_LINK_DISABLE};
    must_succeed(PtlLEAppend(ni, pt, &target, PTL_PRIORITY_LIST, NULL, &le), "PtlLEAppend");
    ptl_md_t desc = {&value, sizeof value, PTL_MD_EVENT_SUCCESS_DISABLE, PTL_EQ_NONE, PTL_CT_NONE};
    must_succeed(PtlMDBind(ni, &desc, &md), "PtlMDBind");
    ptl_process_t next = {.phys = {(ptl_nid_t)((rank + 1) % size), PID}};
    if (PMI_Barrier() != PMI_SUCCESS) {  /* every entry is appended */
        fprintf(stderr, "spin_ring: PMI barrier failed\n");
        return 2;
    }

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long i = 1; i <= rounds; ++i) {
        value = (uint64_t)i;
        must_succeed(PtlPut(md, 0, sizeof value, PTL_NO_ACK_REQ, next, PT, 0, 0, NULL, 0), "PtlPut");
        while (word < (uint64_t)i) {
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("spin_ring: rank %d: %ld rounds, loop_ns=%lld\n", rank, rounds,
           (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec));
    if (PMI_Barrier() != PMI_SUCCESS) return 2;  /* nobody's put is still on its way */
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
