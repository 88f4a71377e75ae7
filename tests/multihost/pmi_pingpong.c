/* A Portals put ping-pong between 2 ranks bootstrapped through PMI-1 (pmi_portals.h), for
 * runs under `s4bxi-launch -- mpirun` across machines: 8 B and 64 KiB, ITERATIONS round
 * trips each, every message checked byte by byte and acknowledged before the next. Rank 0
 * prints one line; the exit status is the verdict (1: wrong bytes or events, 2: a call
 * failed). */
#include <stdint.h>
#include <string.h>

#include "pmi_portals.h"

#define ITERATIONS 4
#define PT 5
#define MATCH 0x5157
static const size_t sizes[] = {8, 64 * 1024};
#define MAX_SIZE (64 * 1024)

static unsigned char send_buffer[MAX_SIZE], recv_buffer[MAX_SIZE];
static ptl_handle_eq_t target_eq, initiator_eq;

/* The byte at `i` of the message of `size` bytes that rank `from` sends at `iteration`. */
static unsigned char pattern(size_t i, size_t size, int iteration, int from)
{
    return (unsigned char)(i * 7 + size + (size_t)iteration * 13 + (size_t)from * 101 + (i >> 8));
}

static ptl_event_t wait_event(ptl_handle_eq_t eq, ptl_event_kind_t kind)
{
    ptl_event_t event;
    MUST(PtlEQWait(eq, &event));
    if (event.type != kind) fail("pmi_pingpong", "event %d where %d was expected", event.type, kind);
    if (event.ni_fail_type != PTL_NI_OK) fail("pmi_pingpong", "event %d failed: %d", event.type, event.ni_fail_type);
    return event;
}

static void send_to(ptl_handle_md_t md, size_t length, int peer)
{
    ptl_process_t target = {.rank = (ptl_rank_t)peer};
    MUST(PtlPut(md, 0, length, PTL_ACK_REQ, target, PT, MATCH, 0, NULL, 0));
    wait_event(initiator_eq, PTL_EVENT_SEND);
    wait_event(initiator_eq, PTL_EVENT_ACK);
}

static void receive(size_t length, int iteration, int from)
{
    ptl_event_t put = wait_event(target_eq, PTL_EVENT_PUT);
    if (put.mlength != length || put.initiator.rank != (ptl_rank_t)from)
        fail("pmi_pingpong", "a put of %zu B from rank %u where %zu B from rank %d were expected", (size_t)put.mlength,
             (unsigned)put.initiator.rank, length, from);
    for (size_t i = 0; i < length; ++i)
        if (recv_buffer[i] != pattern(i, length, iteration, from))
            fail("pmi_pingpong", "%zu B, iteration %d: byte %zu is %u, not %u", length, iteration, i, recv_buffer[i],
                 pattern(i, length, iteration, from));
}

int main(void)
{
    ptl_handle_ni_t ni = bootstrap();
    if (size != 2) fail("pmi_pingpong", "%d ranks: the ping-pong is for 2", size);
    int peer = 1 - rank;
    ptl_pt_index_t pt;
    ptl_handle_me_t me;
    ptl_handle_md_t md;
    MUST(PtlEQAlloc(ni, 16, &target_eq));
    MUST(PtlEQAlloc(ni, 16, &initiator_eq));
    MUST(PtlPTAlloc(ni, 0, target_eq, PT, &pt));
    ptl_me_t entry = {recv_buffer, sizeof recv_buffer, PTL_CT_NONE, PTL_UID_ANY,
                      PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, {.rank = (ptl_rank_t)peer}, MATCH, 0, 0};
    MUST(PtlMEAppend(ni, pt, &entry, PTL_PRIORITY_LIST, NULL, &me));
    ptl_md_t desc = {send_buffer, sizeof send_buffer, 0, initiator_eq, PTL_CT_NONE};
    MUST(PtlMDBind(ni, &desc, &md));
    MUST(PMI_Barrier()); /* every entry is there before the first put */

    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        size_t length = sizes[s];
        for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
            if (rank == 1) receive(length, iteration, 0);
            for (size_t i = 0; i < length; ++i) send_buffer[i] = pattern(i, length, iteration, rank);
            send_to(md, length, peer);
            if (rank == 0) receive(length, iteration, 1);
        }
    }
    MUST(PtlMDRelease(md));
    MUST(PtlMEUnlink(me));
    if (rank == 0)
        printf("pmi_pingpong: 2 ranks, %d round trips of 8 B and of 65536 B, every byte checked: ok\n", ITERATIONS);
    finish(ni);
    return 0;
}
