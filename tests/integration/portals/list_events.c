/* Events of list entries and flow control that programs written for other Portals
 * implementations rely on, on one rank sending to itself (Portals 4.1 specification):
 * - a persistent PtlMESearch(PTL_SEARCH_ONLY) reports every matching unexpected header;
 * - a use-once ME consumed at append by an unexpected header gives PUT_OVERFLOW then
 *   AUTO_UNLINK, and no LINK;
 * - an overflow ME automatically unlinked gives AUTO_FREE once no unexpected header
 *   points into it any more, not before;
 * - a PTL_PT_FLOWCTRL PT disables itself (PT_DISABLED event, PTL_NI_PT_DISABLED at the
 *   initiator) when its EQ is full, instead of dropping events, and when the NI has no
 *   room for another unexpected header (max_unexpected_headers). */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>

#include "../test_checks.h"

static ptl_handle_eq_t target_eq, initiator_eq;
static ptl_handle_md_t md;
static ptl_process_t self;
static char payload[8];

/* One put to ourselves; returns the ni_fail_type of its ACK. */
static int put(ptl_pt_index_t pt, ptl_match_bits_t bits)
{
    ptl_event_t event;
    if (PtlPut(md, 0, sizeof payload, PTL_ACK_REQ, self, pt, bits, 0, NULL, 0) != PTL_OK) return -1;
    do PtlEQWait(initiator_eq, &event); while (event.type != PTL_EVENT_ACK);
    return event.ni_fail_type;
}

static ptl_event_kind_t next_type(void)
{
    ptl_event_t event;
    return PtlEQWait(target_eq, &event) == PTL_OK ? event.type : (ptl_event_kind_t)-1;
}

static int target_quiet(void)
{
    ptl_event_t event;
    return PtlEQGet(target_eq, &event) == PTL_EQ_EMPTY;
}

int main(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_me_t h;
    ptl_pt_index_t pt;
    ptl_event_t event;
    static char overflow[64], data[8];
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    ptl_ni_limits_t desired = {0};
    desired.max_unexpected_headers = 4;
    PtlInit();
    if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, &desired, NULL, &ni) != PTL_OK)
        return 2;
    PtlGetPhysId(ni, &self);
    PtlEQAlloc(ni, 64, &target_eq);
    PtlEQAlloc(ni, 64, &initiator_eq);
    ptl_md_t desc = {payload, sizeof payload, PTL_MD_EVENT_SEND_DISABLE, initiator_eq, PTL_CT_NONE};
    PtlMDBind(ni, &desc, &md);

    /* Three messages land in an overflow entry that unlinks itself after the third
     * (MANAGE_LOCAL, min_free): their PUT events, the third's followed by AUTO_UNLINK. */
    PtlPTAlloc(ni, 0, target_eq, 3, &pt);
    ptl_me_t bucket = {overflow, 3 * sizeof payload, PTL_CT_NONE, PTL_UID_ANY,
                       PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE, any, 0x10, 0x0f,
                       sizeof payload};
    CHECK(PtlMEAppend(ni, 3, &bucket, PTL_OVERFLOW_LIST, (void *)0xB, &h) == PTL_OK);
    for (int bits = 0x11; bits <= 0x13; ++bits) CHECK(put(3, bits) == PTL_NI_OK);
    int puts = 0, unlinks = 0;
    for (int i = 0; i < 4; ++i) {
        ptl_event_kind_t type = next_type();
        puts += type == PTL_EVENT_PUT;
        unlinks += type == PTL_EVENT_AUTO_UNLINK;
    }
    CHECK(puts == 3 && unlinks == 1 && target_quiet());

    /* A persistent search reports each of the three headers and leaves them. */
    ptl_me_t probe = {NULL, 0, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT, any, 0x10, 0x0f, 0};
    CHECK(PtlMESearch(ni, 3, &probe, PTL_SEARCH_ONLY, NULL) == PTL_OK);
    int found = 0;
    while (PtlEQGet(target_eq, &event) == PTL_OK)
        found += event.type == PTL_EVENT_SEARCH && event.ni_fail_type == PTL_NI_OK;
    CHECK(found == 3);

    /* A use-once entry claims one header: PUT_OVERFLOW, AUTO_UNLINK, no LINK; the
     * overflow entry still has headers, so no AUTO_FREE yet. */
    ptl_me_t wanted = {data, sizeof data, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_USE_ONCE, any, 0x11, 0, 0};
    CHECK(PtlMEAppend(ni, 3, &wanted, PTL_PRIORITY_LIST, (void *)0x11, &h) == PTL_OK);
    CHECK(next_type() == PTL_EVENT_PUT_OVERFLOW);
    CHECK(next_type() == PTL_EVENT_AUTO_UNLINK);
    CHECK(target_quiet());

    /* Claiming the last two headers frees the overflow entry: AUTO_FREE with its user_ptr. */
    probe.match_bits = 0x12;
    probe.ignore_bits = 0;
    CHECK(PtlMESearch(ni, 3, &probe, PTL_SEARCH_DELETE, NULL) == PTL_OK);
    CHECK(next_type() == PTL_EVENT_PUT_OVERFLOW && target_quiet());
    probe.match_bits = 0x13;
    CHECK(PtlMESearch(ni, 3, &probe, PTL_SEARCH_DELETE, NULL) == PTL_OK);
    CHECK(next_type() == PTL_EVENT_PUT_OVERFLOW);
    CHECK(PtlEQWait(target_eq, &event) == PTL_OK && event.type == PTL_EVENT_AUTO_FREE && event.user_ptr == (void *)0xB);
    CHECK(target_quiet());

    /* Flow control, full EQ: an EQ of 4 takes 3 PUT events, then the PT disables itself
     * with the event of the last slot; nothing is dropped. */
    ptl_handle_eq_t small;
    PtlEQAlloc(ni, 4, &small);
    PtlPTAlloc(ni, PTL_PT_FLOWCTRL, small, 5, &pt);
    ptl_me_t sink = {data, sizeof data, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, any,
                     0, ~0ull, 0};
    PtlMEAppend(ni, 5, &sink, PTL_PRIORITY_LIST, NULL, &h);
    for (int i = 0; i < 3; ++i) CHECK(put(5, 0) == PTL_NI_OK);
    CHECK(put(5, 0) == PTL_NI_PT_DISABLED);
    int seen_puts = 0, disabled = 0, rc;
    while ((rc = PtlEQGet(small, &event)) == PTL_OK) {
        seen_puts += event.type == PTL_EVENT_PUT;
        disabled += event.type == PTL_EVENT_PT_DISABLED;
    }
    CHECK(rc == PTL_EQ_EMPTY && seen_puts == 3 && disabled == 1);
    CHECK(PtlPTEnable(ni, 5) == PTL_OK && put(5, 0) == PTL_NI_OK);

    /* Flow control, unexpected headers: the NI was granted 4 (pt 3 holds none any more),
     * so a fifth one does not fit. */
    PtlPTAlloc(ni, PTL_PT_FLOWCTRL, target_eq, 6, &pt);
    static char catchall[256];
    ptl_me_t spill = {catchall, sizeof catchall, PTL_CT_NONE, PTL_UID_ANY,
                      PTL_ME_OP_PUT | PTL_ME_MANAGE_LOCAL | PTL_ME_EVENT_LINK_DISABLE, any, 0, ~0ull, 0};
    PtlMEAppend(ni, 6, &spill, PTL_OVERFLOW_LIST, NULL, &h);
    for (int i = 0; i < 4; ++i) CHECK(put(6, i) == PTL_NI_OK);
    CHECK(put(6, 4) == PTL_NI_PT_DISABLED);
    disabled = 0;
    while (PtlEQGet(target_eq, &event) == PTL_OK) disabled += event.type == PTL_EVENT_PT_DISABLED;
    CHECK(disabled == 1);

    PtlNIFini(ni);
    PtlFini();
    printf("%d failures\n", failures);
    return failures != 0;
}
