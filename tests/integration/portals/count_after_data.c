/* A counting event is visible only once its operation's bytes are in memory, for every
 * kind of operation: a triggered Put that the count fires reads the memory the operation
 * wrote. Rank 1 exposes one word, counted on a counter, and registers four triggered Puts
 * of that word back to rank 0, at thresholds 1 to 4. Rank 0 writes the word four times,
 * one operation after the other: a swap (7 becomes 42), a fetching add (+1), an atomic
 * add (+1), a Put (100). Each echo must show the word after the operation that fired it:
 * 42, 43, 44, 100. A count made before the bytes (the fetching operations once counted
 * first) sends the word as it was before.
 * Run on 2 ranks; the exit status is the verdict. */
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>

#include "../test_checks.h"

#define PID 8
#define WORD_PT 1
#define ECHO_PT 2
#define OPS 4

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static uint64_t word = 7;             /* rank 1: what rank 0 writes */
    static uint64_t echo[OPS];            /* rank 0: the word as each count found it */
    static uint64_t operand, fetched;     /* rank 0 */
    const uint64_t expected[OPS] = {42, 43, 44, 100};
    ptl_handle_ni_t ni;
    ptl_handle_ct_t ct;
    ptl_handle_md_t md, get_md;
    ptl_handle_le_t le;
    ptl_pt_index_t pt;
    ptl_ct_event_t count;

    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    ptl_process_t peer = {.phys = {(ptl_nid_t)(rank ^ 1), PID}};
    if (rank == 1) {
        EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, WORD_PT, &pt), PTL_OK);
        ptl_le_t entry = {&word, sizeof word, ct, PTL_UID_ANY,
                          PTL_LE_OP_PUT | PTL_LE_OP_GET | PTL_LE_EVENT_CT_COMM | PTL_LE_EVENT_COMM_DISABLE |
                              PTL_LE_EVENT_LINK_DISABLE};
        EXPECT_RC(PtlLEAppend(ni, pt, &entry, PTL_PRIORITY_LIST, NULL, &le), PTL_OK);
        ptl_md_t desc = {&word, sizeof word, 0, PTL_EQ_NONE, PTL_CT_NONE};
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        for (int k = 0; k < OPS; ++k)
            EXPECT_RC(PtlTriggeredPut(md, 0, sizeof word, PTL_NO_ACK_REQ, peer, ECHO_PT, 0, k * sizeof word, NULL, 0, ct,
                                  (ptl_size_t)k + 1), PTL_OK);
    } else {
        EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, ECHO_PT, &pt), PTL_OK);
        ptl_le_t entry = {echo, sizeof echo, ct, PTL_UID_ANY,
                          PTL_LE_OP_PUT | PTL_LE_EVENT_CT_COMM | PTL_LE_EVENT_COMM_DISABLE | PTL_LE_EVENT_LINK_DISABLE};
        EXPECT_RC(PtlLEAppend(ni, pt, &entry, PTL_PRIORITY_LIST, NULL, &le), PTL_OK);
        ptl_md_t desc = {&operand, sizeof operand, 0, PTL_EQ_NONE, PTL_CT_NONE};
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        ptl_md_t get_desc = {&fetched, sizeof fetched, 0, PTL_EQ_NONE, PTL_CT_NONE};
        EXPECT_RC(PtlMDBind(ni, &get_desc, &get_md), PTL_OK);
    }
    int spawned;
    expect(PMI_Init(&spawned) == PMI_SUCCESS && PMI_Barrier() == PMI_SUCCESS,
           "PMI barrier: entries and triggers in place");
    if (rank == 0) {
        static const char* what[OPS] = {"the swap's count fired its echo on the swapped word",
                                        "the fetching add's count fired its echo on the sum",
                                        "the atomic add's count fired its echo on the sum",
                                        "the Put's count fired its echo on the bytes put"};
        for (int k = 0; k < OPS; ++k) {
            switch (k) {
            case 0:
                operand = 42;
                EXPECT_RC(PtlSwap(get_md, 0, md, 0, sizeof operand, peer, WORD_PT, 0, 0, NULL, 0, NULL, PTL_SWAP,
                              PTL_UINT64_T), PTL_OK);
                break;
            case 1:
                operand = 1;
                EXPECT_RC(PtlFetchAtomic(get_md, 0, md, 0, sizeof operand, peer, WORD_PT, 0, 0, NULL, 0, PTL_SUM,
                                     PTL_UINT64_T), PTL_OK);
                break;
            case 2:
                EXPECT_RC(PtlAtomic(md, 0, sizeof operand, PTL_NO_ACK_REQ, peer, WORD_PT, 0, 0, NULL, 0, PTL_SUM,
                                PTL_UINT64_T), PTL_OK);
                break;
            default:
                operand = 100;
                EXPECT_RC(PtlPut(md, 0, sizeof operand, PTL_NO_ACK_REQ, peer, WORD_PT, 0, 0, NULL, 0), PTL_OK);
            }
            EXPECT_RC(PtlCTWait(ct, (ptl_size_t)k + 1, &count), PTL_OK);  /* its echo is here */
            if (echo[k] != expected[k])
                printf("rank 0: echo %d is %llu, not %llu: the count came before the bytes\n", k,
                       (unsigned long long)echo[k], (unsigned long long)expected[k]);
            expect(echo[k] == expected[k], what[k]);
        }
    } else {
        EXPECT_RC(PtlCTWait(ct, OPS, &count), PTL_OK);
    }
    expect(PMI_Barrier() == PMI_SUCCESS, "PMI barrier: done");
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
