/* Logical NIs (PtlSetMap/PtlGetMap, ranks as targets and as match_id), PtlNIHandle,
 * PtlNIStatus drop counts, and flow control: a PT with PTL_PT_FLOWCTRL that has nothing
 * to match disables itself (PTL_EVENT_PT_DISABLED; the initiator's ACK says
 * PTL_NI_PT_DISABLED) until PtlPTEnable. */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

static ptl_handle_eq_t eq;
static ptl_event_t wait_type(ptl_event_kind_t type)
{
    ptl_event_t event;
    do PtlEQWait(eq, &event); while (event.type != type);
    return event;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char buffer[64];
    ptl_handle_ni_t ni, owner;
    PtlInit();
    expect(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, 8, NULL, NULL, &ni) == PTL_OK, "logical NI");
    ptl_process_t got[4];
    ptl_size_t actual;
    expect(PtlGetMap(ni, 4, got, &actual) == PTL_NO_SPACE, "no map yet");
    ptl_process_t map[2] = {{.phys = {0, 8}}, {.phys = {1, 8}}};
    expect(PtlSetMap(ni, 2, map) == PTL_OK, "PtlSetMap");
    expect(PtlGetMap(ni, 4, got, &actual) == PTL_OK && actual == 2 && got[1].phys.nid == 1 && got[1].phys.pid == 8,
           "PtlGetMap gives the map back");
    ptl_process_t id;
    expect(PtlGetId(ni, &id) == PTL_OK && id.rank == (ptl_rank_t)rank, "PtlGetId gives the rank");
    PtlEQAlloc(ni, 64, &eq);
    expect(PtlNIHandle(eq, &owner) == PTL_OK && PtlHandleIsEqual(owner, ni), "PtlNIHandle of an EQ");
    ptl_pt_index_t pt;
    PtlPTAlloc(ni, 0, eq, 3, &pt);
    ptl_process_t peer = {.rank = (ptl_rank_t)(rank ^ 1)};
    if (rank == 1) {
        expect(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, eq, 9, &pt) == PTL_OK, "a flow-controlled PT");
        ptl_me_t me = {buffer, sizeof buffer, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                       {.rank = 0}, 0, 0, 0};
        ptl_handle_me_t h;
        PtlMEAppend(ni, 3, &me, PTL_PRIORITY_LIST, NULL, &h);
        ptl_event_t put = wait_type(PTL_EVENT_PUT); /* the knock, matched by rank */
        expect(put.initiator.rank == 0, "the PUT event names the initiator by rank");
        ptl_event_t disabled = wait_type(PTL_EVENT_PT_DISABLED);
        expect(disabled.pt_index == 9, "the flow-controlled PT disabled itself");
        ptl_sr_value_t drops;
        expect(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &drops) == PTL_OK && drops >= 1, "PtlNIStatus counts the drop");
        PtlMEAppend(ni, 9, &me, PTL_PRIORITY_LIST, NULL, &h);
        PtlPTEnable(ni, 9);
        put = wait_type(PTL_EVENT_PUT);
        expect(put.pt_index == 9 && memcmp(buffer, "again", 5) == 0, "after PtlPTEnable the PT accepts again");
    } else {
        ptl_md_t desc = {buffer, sizeof buffer, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        PtlMDBind(ni, &desc, &md);
        ptl_event_t ack;
        do {
            PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 3, 0, 0, NULL, 0);
            ack = wait_type(PTL_EVENT_ACK);
        } while (ack.ni_fail_type != PTL_NI_OK);
        expect(1, "a put addressed by rank was accepted");
        PtlPut(md, 0, 4, PTL_ACK_REQ, peer, 9, 0, 0, NULL, 0);
        ack = wait_type(PTL_EVENT_ACK);
        expect(ack.ni_fail_type == PTL_NI_PT_DISABLED, "the initiator learns the PT is disabled");
        do {
            strcpy(buffer, "again");
            PtlPut(md, 0, 6, PTL_ACK_REQ, peer, 9, 0, 0, NULL, 0);
            ack = wait_type(PTL_EVENT_ACK);
        } while (ack.ni_fail_type != PTL_NI_OK);
        ptl_process_t beyond = {.rank = 7};
        expect(PtlPut(md, 0, 1, PTL_NO_ACK_REQ, beyond, 3, 0, 0, NULL, 0) == PTL_ARG_INVALID,
               "a rank outside the map is refused");
    }
    expect(PtlStartBundle(ni) == PTL_OK && PtlEndBundle(ni) == PTL_OK, "bundles");
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
