/* Benchmark program: a recursive-doubling allreduce of one 8-byte integer among all the
 * ranks, in raw Portals, repeated. Usage: allreduce [ITERATIONS] (1000 by default); the
 * rank count must be a power of two. Bootstraps through PMI-1 and addresses peers by NID
 * (one rank per node). Every sum is checked. Rank 0 prints the time its loop took as
 * CLOCK_MONOTONIC tells (simulated time under a simulator). */
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define PID 12
#define MAX_ROUNDS 32

static void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "allreduce: %s failed: %d\n", what, rc);
        exit(1);
    }
}

static double seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}

/* Slots of (iteration parity, round): a partner can be one iteration ahead, never two. */
static int64_t received[2][MAX_ROUNDS], sent[2][MAX_ROUNDS];
static int arrived[2][MAX_ROUNDS];

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 1000;
    int spawned, rank, size;
    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS || PMI_Get_size(&size) != PMI_SUCCESS) {
        fprintf(stderr, "allreduce: PMI-1 is not available\n");
        return 2;
    }
    int rounds = 0;
    while ((1 << rounds) < size) ++rounds;
    if ((1 << rounds) != size || rounds > MAX_ROUNDS) {
        fprintf(stderr, "allreduce: %d ranks is not a power of two\n", size);
        return 2;
    }
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    ptl_pt_index_t pt;
    ptl_process_t me;
    check(PtlInit(), "PtlInit");
    check(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), "PtlNIInit");
    check(PtlGetPhysId(ni, &me), "PtlGetPhysId");
    check(PtlEQAlloc(ni, 1024, &eq), "PtlEQAlloc");
    check(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
    for (int parity = 0; parity < 2; ++parity)
        for (int round = 0; round < rounds; ++round) {
            ptl_me_t entry = {&received[parity][round], sizeof(int64_t), PTL_CT_NONE, PTL_UID_ANY,
                              PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, {.phys = {PTL_NID_ANY, PTL_PID_ANY}},
                              (ptl_match_bits_t)(parity * MAX_ROUNDS + round), 0, 0};
            ptl_handle_me_t handle;
            check(PtlMEAppend(ni, 0, &entry, PTL_PRIORITY_LIST, NULL, &handle), "PtlMEAppend");
        }
    ptl_md_t desc = {sent, sizeof sent, 0, PTL_EQ_NONE, PTL_CT_NONE};
    check(PtlMDBind(ni, &desc, &md), "PtlMDBind");
    /* Rank r runs on node r (one rank per node); its entries exist once everybody passed. */
    if (PMI_Barrier() != PMI_SUCCESS) return 2;
    uint32_t base_nid = me.phys.nid - (uint32_t)rank;
    double start = seconds();

    for (long i = 0; i < iterations; ++i) {
        int parity = (int)(i & 1);
        int64_t value = rank + i;
        for (int round = 0; round < rounds; ++round) {
            ptl_process_t peer = {.phys = {base_nid + (uint32_t)(rank ^ (1 << round)), PID}};
            sent[parity][round] = value;
            check(PtlPut(md, (ptl_size_t)((parity * MAX_ROUNDS + round) * sizeof(int64_t)), sizeof(int64_t),
                         PTL_NO_ACK_REQ, peer, 0, (ptl_match_bits_t)(parity * MAX_ROUNDS + round), 0, NULL, 0),
                  "PtlPut");
            while (!arrived[parity][round]) {
                ptl_event_t event;
                check(PtlEQWait(eq, &event), "PtlEQWait");
                if (event.type != PTL_EVENT_PUT) continue;
                ++arrived[event.match_bits / MAX_ROUNDS][event.match_bits % MAX_ROUNDS];
            }
            --arrived[parity][round];
            value += received[parity][round];
        }
        int64_t expected = (int64_t)size * (size - 1) / 2 + (int64_t)size * i;
        if (value != expected) {
            fprintf(stderr, "allreduce: rank %d, iteration %ld: %lld, expected %lld\n", rank, i, (long long)value,
                    (long long)expected);
            return 1;
        }
    }
    if (rank == 0)
        printf("allreduce: ok: %d ranks, %ld iterations, loop %.9f s\n", size, iterations, seconds() - start);
    PMI_Barrier();
    PtlNIFini(ni);
    PtlFini();
    PMI_Finalize();
    return 0;
}
