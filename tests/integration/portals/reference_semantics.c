/* What the Portals 4 reference implementation's test suite expects and this model once did
 * otherwise (tests/conformance/): argument checks (bundles and PtlAtomicSync before
 * PtlInit, PtlCTInc with both fields, an ACK with nowhere to land, volatile and atomic
 * sizes over the limits the program asked for), the order of AUTO_UNLINK after the
 * operation's event and of a Get's target event before its REPLY on loopback, operation
 * violations, counting bytes of a truncated Get, a second PtlNIInit, and PtlGetId on a
 * logical NI whose map orders the ranks its own way. Each rank works with itself; run on
 * 2 ranks (the map check swaps them). */
#include <portals4.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

#define PID 8

static ptl_event_kind_t next_type(ptl_handle_eq_t eq)
{
    ptl_event_t event;
    if (PtlEQWait(eq, &event) != PTL_OK) return (ptl_event_kind_t)-1;
    return event.type;
}

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char buffer[1024], target[1024];
    ptl_handle_ni_t ni, again;
    ptl_handle_eq_t eq, md_eq;
    ptl_handle_ct_t ct, trigger;
    ptl_handle_md_t md, bare_md;
    ptl_handle_me_t me_h;
    ptl_pt_index_t pt;
    ptl_process_t self;
    ptl_event_t event;
    ptl_ct_event_t count;
    ptl_sr_value_t status;

    /* Before PtlInit: PTL_NO_INIT, even from calls with nothing to look up. */
    CHECK(PtlStartBundle(0) == PTL_NO_INIT);
    CHECK(PtlEndBundle(0) == PTL_NO_INIT);
    CHECK(PtlAtomicSync() == PTL_NO_INIT);
    CHECK(PtlInit() == PTL_OK);
    CHECK(PtlAtomicSync() == PTL_OK);
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni) == PTL_OK);
    CHECK(PtlStartBundle(PTL_INVALID_HANDLE) == PTL_ARG_INVALID);
    CHECK(PtlEndBundle(PTL_INVALID_HANDLE) == PTL_ARG_INVALID);
    CHECK(PtlStartBundle(ni) == PTL_OK && PtlEndBundle(ni) == PTL_OK);
    CHECK(PtlGetPhysId(ni, &self) == PTL_OK);

    /* A second PtlNIInit returns the same NI, which lives until its PtlNIFini too. */
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &again) == PTL_OK &&
          PtlHandleIsEqual(again, ni));
    CHECK(PtlNIFini(again) == PTL_OK);
    CHECK(PtlEQAlloc(ni, 64, &eq) == PTL_OK);
    CHECK(PtlEQAlloc(ni, 64, &md_eq) == PTL_OK);
    CHECK(PtlCTAlloc(ni, &ct) == PTL_OK && PtlCTAlloc(ni, &trigger) == PTL_OK);
    CHECK(PtlPTAlloc(ni, 0, eq, 0, &pt) == PTL_OK);

    /* PtlCTInc: success or failure, not both (also triggered). */
    CHECK(PtlCTInc(ct, (ptl_ct_event_t){7, 3}) == PTL_ARG_INVALID);
    CHECK(PtlTriggeredCTInc(ct, (ptl_ct_event_t){7, 3}, trigger, 1) == PTL_ARG_INVALID);
    CHECK(PtlCTInc(ct, (ptl_ct_event_t){7, 0}) == PTL_OK && PtlCTGet(ct, &count) == PTL_OK && count.success == 7);
    CHECK(PtlCTSet(ct, (ptl_ct_event_t){0, 0}) == PTL_OK);

    /* An acknowledgement needs the MD's EQ (PTL_ACK_REQ) or CT (PTL_CT_ACK_REQ). */
    ptl_md_t bare = {buffer, sizeof buffer, 0, PTL_EQ_NONE, PTL_CT_NONE};
    CHECK(PtlMDBind(ni, &bare, &bare_md) == PTL_OK);
    CHECK(PtlPut(bare_md, 0, 8, PTL_ACK_REQ, self, pt, 1, 0, NULL, 0) == PTL_ARG_INVALID);
    CHECK(PtlPut(bare_md, 0, 8, PTL_CT_ACK_REQ, self, pt, 1, 0, NULL, 0) == PTL_ARG_INVALID);
    CHECK(PtlAtomic(bare_md, 0, 8, PTL_ACK_REQ, self, pt, 1, 0, NULL, 0, PTL_SUM, PTL_INT64_T) == PTL_ARG_INVALID);
    CHECK(PtlMDRelease(bare_md) == PTL_OK);

    /* A use-once ME consumed by a Put: PUT, then AUTO_UNLINK. */
    ptl_md_t desc = {buffer, sizeof buffer, 0, md_eq, PTL_CT_NONE};
    CHECK(PtlMDBind(ni, &desc, &md) == PTL_OK);
    ptl_me_t once = {target, 64, PTL_CT_NONE, PTL_UID_ANY,
                     PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE,
                     {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 1, 0, 0};
    CHECK(PtlMEAppend(ni, pt, &once, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);
    CHECK(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 1, 0, NULL, 0) == PTL_OK);
    CHECK(next_type(eq) == PTL_EVENT_PUT);
    CHECK(next_type(eq) == PTL_EVENT_AUTO_UNLINK);
    CHECK(next_type(md_eq) == PTL_EVENT_SEND);
    CHECK(next_type(md_eq) == PTL_EVENT_ACK);
    CHECK(PtlMDRelease(md) == PTL_OK);

    /* A Get from itself through one EQ: the target's GET, its AUTO_UNLINK, then REPLY. */
    desc.eq_handle = eq;
    CHECK(PtlMDBind(ni, &desc, &md) == PTL_OK);
    CHECK(PtlMEAppend(ni, pt, &once, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);
    CHECK(PtlGet(md, 0, 8, self, pt, 1, 0, NULL) == PTL_OK);
    CHECK(next_type(eq) == PTL_EVENT_GET);
    CHECK(next_type(eq) == PTL_EVENT_AUTO_UNLINK);
    CHECK(next_type(eq) == PTL_EVENT_REPLY);

    /* A Put to an ME that allows Gets only: an operation violation, not a permission one. */
    ptl_me_t get_only = {target, 64, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE,
                         {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 2, 0, 0};
    CHECK(PtlMEAppend(ni, pt, &get_only, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);
    CHECK(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 2, 0, NULL, 0) == PTL_OK);
    while (PtlEQWait(eq, &event) == PTL_OK && event.type != PTL_EVENT_ACK) continue;
    CHECK(event.type == PTL_EVENT_ACK && event.ni_fail_type == PTL_NI_OP_VIOLATION);
    CHECK(PtlNIStatus(ni, PTL_SR_OPERATION_VIOLATIONS, &status) == PTL_OK && status == 1);
    CHECK(PtlNIStatus(ni, PTL_SR_PERMISSION_VIOLATIONS, &status) == PTL_OK && status == 0);
    CHECK(PtlMEUnlink(me_h) == PTL_OK);
    CHECK(PtlMDRelease(md) == PTL_OK);

    /* A Get of 50 B truncated to 36 by the ME: PTL_MD_EVENT_CT_BYTES counts the 36. */
    ptl_md_t counted = {buffer, sizeof buffer, PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_CT_BYTES, PTL_EQ_NONE, ct};
    CHECK(PtlMDBind(ni, &counted, &md) == PTL_OK);
    ptl_me_t short_me = {target, 36, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE,
                         {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 3, 0, 0};
    CHECK(PtlMEAppend(ni, pt, &short_me, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);
    CHECK(PtlGet(md, 0, 50, self, pt, 3, 0, NULL) == PTL_OK);
    CHECK(PtlCTWait(ct, 1, &count) == PTL_OK && count.success == 36 && count.failure == 0);
    CHECK(PtlMEUnlink(me_h) == PTL_OK);
    CHECK(PtlMDRelease(md) == PTL_OK);

    /* Without a max_volatile_size asked for, the limit is reported only: a volatile Put
     * larger than it goes (through PIO or DMA). */
    ptl_md_t vol = {buffer, sizeof buffer, PTL_MD_VOLATILE | PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, ct};
    CHECK(PtlMDBind(ni, &vol, &md) == PTL_OK);
    CHECK(PtlCTSet(ct, (ptl_ct_event_t){0, 0}) == PTL_OK);
    CHECK(PtlPut(md, 0, 400, PTL_CT_ACK_REQ, self, pt, 9, 0, NULL, 0) == PTL_OK);
    CHECK(PtlCTWait(ct, 1, &count) == PTL_OK && count.failure == 1); /* nothing matches 9 */
    CHECK(PtlMDRelease(md) == PTL_OK);

    /* Limits asked for: volatile Puts and every atomic (fetching ones too) within them. */
    ptl_handle_ni_t limited;
    ptl_ni_limits_t desired = {0}, actual;
    desired.max_volatile_size = 32;
    desired.max_atomic_size = 4;
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PID, &desired, &actual, &limited) ==
          PTL_OK);
    CHECK(actual.max_volatile_size == 32 && actual.max_atomic_size == 4 && actual.max_fetch_atomic_size > 4);
    ptl_pt_index_t lpt;
    ptl_handle_md_t lmd, lvol;
    ptl_handle_ct_t lct;
    CHECK(PtlCTAlloc(limited, &lct) == PTL_OK);
    CHECK(PtlPTAlloc(limited, 0, PTL_EQ_NONE, 0, &lpt) == PTL_OK);
    ptl_md_t plain = {buffer, sizeof buffer, 0, PTL_EQ_NONE, lct};
    vol.ct_handle = lct;
    CHECK(PtlMDBind(limited, &plain, &lmd) == PTL_OK && PtlMDBind(limited, &vol, &lvol) == PTL_OK);
    CHECK(PtlPut(lvol, 0, 33, PTL_NO_ACK_REQ, self, lpt, 0, 0, NULL, 0) == PTL_ARG_INVALID);
    CHECK(PtlPut(lvol, 0, 32, PTL_NO_ACK_REQ, self, lpt, 0, 0, NULL, 0) == PTL_OK);
    CHECK(PtlAtomic(lmd, 0, 8, PTL_NO_ACK_REQ, self, lpt, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T) == PTL_ARG_INVALID);
    CHECK(PtlFetchAtomic(lmd, 0, lmd, 8, 8, self, lpt, 0, 0, NULL, 0, PTL_SUM, PTL_INT64_T) == PTL_ARG_INVALID);
    int64_t operand = 0;
    CHECK(PtlSwap(lmd, 0, lmd, 8, 8, self, lpt, 0, 0, NULL, 0, &operand, PTL_SWAP, PTL_INT64_T) == PTL_ARG_INVALID);
    CHECK(PtlFetchAtomic(lmd, 0, lmd, 8, 4, self, lpt, 0, 0, NULL, 0, PTL_SUM, PTL_INT32_T) == PTL_OK);
    CHECK(PtlNIFini(limited) == PTL_OK);

    /* A logical NI whose map lists the ranks the other way round: PtlGetId gives the
     * rank's index in that map. */
    ptl_handle_ni_t logical;
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PID, NULL, NULL, &logical) == PTL_OK);
    ptl_process_t map[2] = {{.phys = {1, PID}}, {.phys = {0, PID}}};
    CHECK(PtlSetMap(logical, 2, map) == PTL_OK);
    ptl_process_t id;
    CHECK(self.phys.nid == (ptl_nid_t)rank); /* one rank per node, in order */
    CHECK(PtlGetId(logical, &id) == PTL_OK && id.rank == (ptl_rank_t)(rank ^ 1));
    CHECK(PtlNIFini(logical) == PTL_OK);

    CHECK(PtlNIFini(ni) == PTL_OK);
    CHECK(PtlNIFini(ni) == PTL_ARG_INVALID);
    PtlFini();
    CHECK(PtlAtomicSync() == PTL_NO_INIT);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
