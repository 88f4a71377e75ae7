/* Overflow list and unexpected headers: messages with no priority entry land in an
 * overflow entry (PUT event on PTL_OVERFLOW_LIST) and leave unexpected headers, which
 * PtlMESearch reports or deletes and a later priority PtlMEAppend claims
 * (PUT_OVERFLOW events pointing at the data in the overflow buffer). */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

static ptl_handle_eq_t eq;
static ptl_event_t next(void)
{
    ptl_event_t event;
    if (PtlEQWait(eq, &event) != PTL_OK) expect(0, "PtlEQWait");
    return event;
}
static int no_event(void)
{
    ptl_event_t event;
    return PtlEQGet(eq, &event) == PTL_EQ_EMPTY;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char overflow[4096], data[64];
    ptl_handle_ni_t ni;
    PtlInit();
    PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 5, NULL, NULL, &ni);
    PtlEQAlloc(ni, 64, &eq);
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    if (rank == 1) {
        ptl_pt_index_t pt;
        PtlPTAlloc(ni, 0, eq, 7, &pt);
        ptl_me_t bucket = {overflow, sizeof overflow, PTL_CT_NONE, PTL_UID_ANY,
                           PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE, any, 0x10, 0x0f, 0};
        ptl_handle_me_t h;
        expect(PtlMEAppend(ni, 7, &bucket, PTL_OVERFLOW_LIST, (void *)0xB, &h) == PTL_OK, "append to the overflow list");
        int seen = 0;
        while (seen < 4) { /* the knock (0x1f), then 0x11, 0x12, 0x13 */
            ptl_event_t event = next();
            expect(event.type == PTL_EVENT_PUT && event.ptl_list == PTL_OVERFLOW_LIST && event.user_ptr == (void *)0xB,
                   "a message with no priority entry lands in the overflow entry");
            ++seen;
        }
        ptl_me_t probe = {NULL, 0, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT, any, 0x12, 0, 0};
        PtlMESearch(ni, 7, &probe, PTL_SEARCH_ONLY, (void *)0x5);
        ptl_event_t found = next();
        expect(found.type == PTL_EVENT_SEARCH && found.ni_fail_type == PTL_NI_OK && found.match_bits == 0x12 &&
                   found.mlength == 16 && found.user_ptr == (void *)0x5 && memcmp(found.start, "message 0x12", 12) == 0,
               "PTL_SEARCH_ONLY reports the unexpected header");
        probe.match_bits = 0x19;
        PtlMESearch(ni, 7, &probe, PTL_SEARCH_ONLY, NULL);
        found = next();
        expect(found.type == PTL_EVENT_SEARCH && found.ni_fail_type == PTL_NI_NO_MATCH, "a search that finds nothing");
        ptl_me_t wanted = {data, sizeof data, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_USE_ONCE, any, 0x11, 0, 0};
        expect(PtlMEAppend(ni, 7, &wanted, PTL_PRIORITY_LIST, (void *)0x11, &h) == PTL_OK, "append a use-once entry");
        ptl_event_t over = next();
        expect(over.type == PTL_EVENT_PUT_OVERFLOW && over.match_bits == 0x11 && over.user_ptr == (void *)0x11 &&
                   over.mlength == 16 && memcmp(over.start, "message 0x11", 12) == 0,
               "the appended entry claims its unexpected header: PUT_OVERFLOW, data in the overflow buffer");
        ptl_event_t gone = next();
        expect(gone.type == PTL_EVENT_AUTO_UNLINK && gone.user_ptr == (void *)0x11 && no_event(),
               "a use-once entry consumed at append is never linked, but reports its unlink");
        probe.match_bits = 0x13;
        PtlMESearch(ni, 7, &probe, PTL_SEARCH_DELETE, (void *)0x13);
        over = next();
        expect(over.type == PTL_EVENT_PUT_OVERFLOW && over.match_bits == 0x13, "PTL_SEARCH_DELETE claims the header");
        PtlMESearch(ni, 7, &probe, PTL_SEARCH_ONLY, NULL);
        expect(next().ni_fail_type == PTL_NI_NO_MATCH, "a deleted header is gone");
        wanted.options = PTL_ME_OP_PUT;
        wanted.match_bits = 0x12;
        PtlMEAppend(ni, 7, &wanted, PTL_PRIORITY_LIST, NULL, &h);
        expect(next().type == PTL_EVENT_PUT_OVERFLOW, "a persistent entry claims the header 0x12");
        expect(next().type == PTL_EVENT_LINK, "then is linked");
    } else {
        ptl_md_t md_desc = {data, sizeof data, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        PtlMDBind(ni, &md_desc, &md);
        ptl_process_t peer = {.phys = {1, 5}};
        for (;;) {
            PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 7, 0x1f, 0, NULL, 0);
            ptl_event_t event;
            do event = next(); while (event.type != PTL_EVENT_ACK);
            if (event.ni_fail_type == PTL_NI_OK) break;
        }
        for (int bits = 0x11; bits <= 0x13; ++bits) {
            snprintf(data, sizeof data, "message %#x", bits);
            PtlPut(md, 0, 16, PTL_ACK_REQ, peer, 7, bits, 0, NULL, 0);
            ptl_event_t event;
            do event = next(); while (event.type != PTL_EVENT_ACK);
            expect(event.ni_fail_type == PTL_NI_OK && event.ptl_list == PTL_OVERFLOW_LIST,
                   "accepted by the overflow entry, and the ACK says so");
        }
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
