/* I/O vectors (PTL_IOVEC) on MDs and MEs: a put gathers three pieces on the initiator and
 * scatters them into two on the target; a get brings them back through vectors; an atomic
 * applies across a vector's pieces. */
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_event_t event;
    ptl_ni_limits_t limits;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 4, NULL, &limits, &ni);
    expect(limits.max_iovecs > 0, "the NI supports I/O vectors");
    PtlEQAlloc(ni, 64, &eq);
    ptl_process_t peer = {.phys = {1, 4}};
    static char a[4], b[8], c[16];
    static int64_t x = 40, y = 100;
    if (rank == 1) {
        ptl_pt_index_t pt;
        PtlPTAlloc(ni, 0, eq, 0, &pt);
        ptl_iovec_t pieces[2] = {{a, 4}, {b, 8}};
        ptl_me_t me = {pieces, 2, PTL_CT_NONE, PTL_UID_ANY, PTL_IOVEC | PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE,
                       {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 1, 0, 0};
        ptl_handle_me_t h;
        PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &h);
        ptl_iovec_t numbers[2] = {{&x, 8}, {&y, 8}};
        ptl_me_t me2 = {numbers, 2, PTL_CT_NONE, PTL_UID_ANY, PTL_IOVEC | PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                        {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 2, 0, 0};
        PtlMEAppend(ni, 0, &me2, PTL_PRIORITY_LIST, NULL, &h);
        ptl_me_t knock = {c, 1, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                          {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
        PtlMEAppend(ni, 0, &knock, PTL_PRIORITY_LIST, NULL, &h);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_PUT || event.match_bits != 1);
        expect(event.mlength == 10 && memcmp(a, "abcd", 4) == 0 && memcmp(b, "efghij", 6) == 0,
               "a put scattered into the ME's two pieces");
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_GET);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ATOMIC);
        expect(x == 42 && y == 103, "an atomic SUM across the pieces of a vector");
    } else {
        static char first[3] = "abc", second[5] = "defgh", third[2] = "ij";
        ptl_iovec_t gather[3] = {{first, 3}, {second, 5}, {third, 2}};
        ptl_md_t desc = {gather, 3, PTL_IOVEC, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        expect(PtlMDBind(ni, &desc, &md) == PTL_OK, "bind a three-piece MD");
        ptl_md_t plain_desc = {c, sizeof c, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t plain;
        PtlMDBind(ni, &plain_desc, &plain);
        do {
            PtlPut(plain, 0, 1, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0);
            do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
        } while (event.ni_fail_type != PTL_NI_OK);
        expect(PtlPut(md, 0, 11, PTL_ACK_REQ, peer, 0, 1, 0, NULL, 0) == PTL_ARG_INVALID,
               "a put longer than the vector is refused");
        PtlPut(md, 0, 10, PTL_ACK_REQ, peer, 0, 1, 0, NULL, 0);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
        memset(first, 0, 3), memset(second, 0, 5), memset(third, 0, 2);
        PtlGet(md, 1, 8, peer, 0, 1, 2, NULL); /* target bytes 2..9 -> our bytes 1..8 */
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_REPLY);
        expect(event.mlength == 8 && first[1] == 'c' && first[2] == 'd' && memcmp(second, "efghi", 5) == 0 &&
                   third[0] == 'j',
               "a get gathered from the target's vector into ours");
        static int64_t two = 2, three = 3;
        ptl_iovec_t operands[2] = {{&two, 8}, {&three, 8}};
        ptl_md_t op_desc = {operands, 2, PTL_IOVEC, eq, PTL_CT_NONE};
        ptl_handle_md_t op_md;
        PtlMDBind(ni, &op_desc, &op_md);
        PtlAtomic(op_md, 0, 16, PTL_ACK_REQ, peer, 0, 2, 0, NULL, 0, PTL_SUM, PTL_INT64_T);
        do PtlEQWait(eq, &event); while (event.type != PTL_EVENT_ACK);
        expect(event.ni_fail_type == PTL_NI_OK, "the atomic was acknowledged");
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
