/* An allreduce in raw Portals on any number of ranks bootstrapped through PMI-1
 * (pmi_portals.h), for runs under `s4bxi-launch -- mpirun` across machines: in each of
 * ROUNDS rounds every rank puts its vector of COUNT 64-bit integers into every other rank's
 * table (its own row, matched by round), waits on the round's counter for the others',
 * and sums; every element received and every sum are checked. Each rank's puts are
 * acknowledged (a counter on its MD) before it ends. Rank 0 prints one line; the exit
 * status is the verdict (1: wrong data, 2: a call failed). */
#include <stdint.h>
#include <string.h>

#include "pmi_portals.h"

#define ROUNDS 3
#define COUNT 512 /* 4 KiB a put */
#define PT 6
#define MAX_RANKS 64

static int64_t table[ROUNDS][MAX_RANKS][COUNT], mine[ROUNDS][COUNT];

static int64_t contribution(int from, int round, int i)
{
    return (int64_t)(from + 1) * 1000003 + (int64_t)i * 7 - round * 11 + (from % 3) * i;
}

int main(void)
{
    ptl_handle_ni_t ni = bootstrap();
    if (size < 2 || size > MAX_RANKS) fail("pmi_allreduce", "%d ranks: from 2 to %d", size, MAX_RANKS);
    ptl_handle_eq_t eq;
    ptl_pt_index_t pt;
    ptl_handle_ct_t received[ROUNDS], acked;
    ptl_handle_me_t entries[ROUNDS];
    ptl_handle_md_t md;
    MUST(PtlEQAlloc(ni, 8, &eq));
    MUST(PtlPTAlloc(ni, 0, eq, PT, &pt));
    MUST(PtlCTAlloc(ni, &acked));
    for (int round = 0; round < ROUNDS; ++round) {
        /* A counter per round: a rank a round ahead may put before a late one's put of this round. */
        MUST(PtlCTAlloc(ni, &received[round]));
        ptl_me_t entry = {table[round], sizeof table[round], received[round], PTL_UID_ANY,
                          PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_SUCCESS_DISABLE |
                              PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_CT_BYTES,
                          {.rank = PTL_RANK_ANY}, (ptl_match_bits_t)round, 0, 0};
        MUST(PtlMEAppend(ni, pt, &entry, PTL_PRIORITY_LIST, NULL, &entries[round]));
    }
    ptl_md_t desc = {mine, sizeof mine, PTL_MD_EVENT_SUCCESS_DISABLE | PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, acked};
    MUST(PtlMDBind(ni, &desc, &md));
    MUST(PMI_Barrier()); /* every entry is there before the first put */

    const size_t row = sizeof mine[0];
    for (int round = 0; round < ROUNDS; ++round) {
        for (int i = 0; i < COUNT; ++i) mine[round][i] = contribution(rank, round, i);
        for (int step = 1; step < size; ++step) {
            int to = (rank + step) % size;
            ptl_process_t target = {.rank = (ptl_rank_t)to};
            MUST(PtlPut(md, round * row, row, PTL_CT_ACK_REQ, target, PT, (ptl_match_bits_t)round, rank * row, NULL,
                        0));
        }
        ptl_ct_event_t count;
        MUST(PtlCTWait(received[round], (ptl_size_t)(size - 1) * row, &count));
        if (count.failure)
            fail("pmi_allreduce", "round %d: %llu failed puts", round, (unsigned long long)count.failure);
        memcpy(table[round][rank], mine[round], row);
        for (int i = 0; i < COUNT; ++i) {
            int64_t sum = 0, expected = 0;
            for (int from = 0; from < size; ++from) {
                if (table[round][from][i] != contribution(from, round, i))
                    fail("pmi_allreduce", "round %d: rank %d's element %d is %lld, not %lld", round, from, i,
                         (long long)table[round][from][i], (long long)contribution(from, round, i));
                sum += table[round][from][i];
                expected += contribution(from, round, i);
            }
            if (sum != expected)
                fail("pmi_allreduce", "round %d: element %d is %lld, not %lld", round, i, (long long)sum,
                     (long long)expected);
        }
    }
    ptl_ct_event_t acks;
    MUST(PtlCTWait(acked, (ptl_size_t)(size - 1) * ROUNDS, &acks));
    if (acks.failure) fail("pmi_allreduce", "%llu puts not acknowledged", (unsigned long long)acks.failure);
    MUST(PtlMDRelease(md));
    for (int round = 0; round < ROUNDS; ++round) MUST(PtlMEUnlink(entries[round]));
    if (rank == 0)
        printf("pmi_allreduce: %d ranks, %d rounds of %d 64-bit integers, every sum checked: ok\n", size, ROUNDS,
               COUNT);
    finish(ni);
    return 0;
}
