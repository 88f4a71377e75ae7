/* Triggered list operations (PtlTriggeredMEAppend, PtlTriggeredMEUnlink: the reference
 * implementation's, outside the specification). Rank 1 registers, on one counter `go`:
 * the append of entry E at 1, its unlink at 2, and the append of entry F at 3, F being
 * unlinked by hand before then. An overflow entry O takes whatever no entry matches.
 * Rank 0 puts to E's match bits while E is linked, then to E's and F's once `go` is 3:
 * the first lands in E, the others in O (a PUT event of O's). */
#include <portals4.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

enum { PT = 4, PID = 6, READY_BITS = 1, E_BITS = 7, F_BITS = 9 };

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static ptl_handle_md_t md;

static ptl_event_t next_event(void)
{
    ptl_event_t event;
    EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
    return event;
}

static void put(ptl_match_bits_t bits)
{
    ptl_process_t peer = {.phys = {rank ^ 1, PID}};
    EXPECT_RC(PtlPut(md, 0, 8, PTL_NO_ACK_REQ, peer, PT, bits, 0, NULL, 0), PTL_OK);
}

static ptl_me_t entry(void *buffer, ptl_match_bits_t bits, ptl_match_bits_t ignore, unsigned options)
{
    ptl_me_t me = {buffer, 8, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | options, {.phys = {PTL_NID_ANY, PTL_PID_ANY}},
                   bits, ignore, 0};
    return me;
}

static void target(void)
{
    static char e_buffer[8], f_buffer[8], o_buffer[64];
    static int e_tag, f_tag, o_tag;
    ptl_handle_ct_t go;
    ptl_handle_me_t o, e, f;
    EXPECT_RC(PtlCTAlloc(ni, &go), PTL_OK);
    ptl_me_t o_desc = entry(o_buffer, 0, ~(ptl_match_bits_t)0, PTL_ME_EVENT_LINK_DISABLE | PTL_ME_MANAGE_LOCAL);
    o_desc.length = sizeof o_buffer;
    EXPECT_RC(PtlMEAppend(ni, PT, &o_desc, PTL_OVERFLOW_LIST, &o_tag, &o), PTL_OK);

    ptl_me_t e_desc = entry(e_buffer, E_BITS, 0, 0);
    ptl_me_t f_desc = entry(f_buffer, F_BITS, 0, 0);
    EXPECT_RC(PtlTriggeredMEAppend(ni, PT, NULL, PTL_PRIORITY_LIST, &e_tag, &e, go, 1), PTL_ARG_INVALID);
    EXPECT_RC(PtlTriggeredMEAppend(ni, PT, &e_desc, PTL_PRIORITY_LIST, &e_tag, &e, PTL_CT_NONE, 1), PTL_ARG_INVALID);
    EXPECT_RC(PtlTriggeredMEAppend(ni, PT, &e_desc, PTL_PRIORITY_LIST, &e_tag, &e, go, 1), PTL_OK);
    expect(e != PTL_INVALID_HANDLE, "the entry's handle exists before its append");
    EXPECT_RC(PtlTriggeredMEUnlink(e, go, 2), PTL_OK);
    EXPECT_RC(PtlTriggeredMEUnlink(PTL_INVALID_HANDLE, go, 2), PTL_ARG_INVALID);
    EXPECT_RC(PtlTriggeredMEAppend(ni, PT, &f_desc, PTL_PRIORITY_LIST, &f_tag, &f, go, 3), PTL_OK);
    EXPECT_RC(PtlMEUnlink(f), PTL_OK);

    ptl_event_t event;
    EXPECT_RC(PtlEQGet(eq, &event), PTL_EQ_EMPTY);
    EXPECT_RC(PtlCTInc(go, (ptl_ct_event_t){1, 0}), PTL_OK);
    event = next_event();
    expect(event.type == PTL_EVENT_LINK && event.user_ptr == &e_tag, "E is linked when the counter reaches 1");

    put(READY_BITS);
    event = next_event();
    expect(event.type == PTL_EVENT_PUT && event.user_ptr == &e_tag && event.match_bits == E_BITS,
           "a put to E's bits lands in E");
    expect(memcmp(e_buffer, "payload", 8) == 0, "with its data");

    EXPECT_RC(PtlCTInc(go, (ptl_ct_event_t){2, 0}), PTL_OK);  /* unlinks E, then F's append finds F gone */
    put(READY_BITS);
    event = next_event();
    expect(event.type == PTL_EVENT_PUT && event.user_ptr == &o_tag && event.match_bits == E_BITS,
           "once E is unlinked by its trigger, its bits land in the overflow entry");
    event = next_event();
    expect(event.type == PTL_EVENT_PUT && event.user_ptr == &o_tag && event.match_bits == F_BITS,
           "F, unlinked before its append fired, was never linked");
    EXPECT_RC(PtlEQGet(eq, &event), PTL_EQ_EMPTY);
}

static void initiator(void)
{
    static char ready[8];
    ptl_handle_me_t h;
    ptl_me_t ready_desc = entry(ready, READY_BITS, 0, PTL_ME_EVENT_LINK_DISABLE);
    EXPECT_RC(PtlMEAppend(ni, PT, &ready_desc, PTL_PRIORITY_LIST, NULL, &h), PTL_OK);
    ptl_event_t event = next_event();
    expect(event.type == PTL_EVENT_PUT, "target ready: E linked");
    put(E_BITS);
    event = next_event();
    expect(event.type == PTL_EVENT_PUT, "target ready: E unlinked");
    put(E_BITS);
    put(F_BITS);
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char payload[8] = "payload";
    ptl_pt_index_t pt;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 64, &eq), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, PT, &pt), PTL_OK);
    ptl_md_t md_desc = {payload, sizeof payload, 0, PTL_EQ_NONE, PTL_CT_NONE};
    EXPECT_RC(PtlMDBind(ni, &md_desc, &md), PTL_OK);
    if (rank == 1)
        target();
    else
        initiator();
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
