/* Portals 4 semantics of the first slice, checked from a real program: return codes of
 * bad calls, LINK / AUTO_UNLINK, truncation, counting events, non-matching NIs, Get data,
 * Atomic SUM. Rank 1 is the target, rank 0 the initiator. Prints "ok <what>" per check
 * and "FAIL <what>" (exit 1) on the first failure. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_checks.h"

static ptl_handle_eq_t eq;
static ptl_event_t wait_event(ptl_event_kind_t kind)
{
    ptl_event_t event;
    do {
        if (PtlEQWait(eq, &event) != PTL_OK) expect(0, "PtlEQWait");
    } while (event.type != kind);
    return event;
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    ptl_handle_ni_t ni, nm;
    ptl_ni_limits_t limits;
    static unsigned char buffer[4096], small[11];
    ptl_process_t peer = {.phys = {.nid = 1, .pid = 9}};

    /* Argument checks before and at initialization. */
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, NULL, &ni), PTL_NO_INIT);
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, 9, NULL, NULL, &ni),
              PTL_ARG_INVALID);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, &limits, &ni), PTL_OK);
    expect(limits.max_pt_index >= 63 && limits.max_msg_size >= (1 << 20), "NI limits reported");
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &nm), PTL_OK);
    ptl_process_t id;
    EXPECT_RC(PtlGetPhysId(ni, &id), PTL_OK);
    expect(id.phys.nid == (ptl_nid_t)rank && id.phys.pid == 9, "PtlGetPhysId gives (rank's node, requested pid)");
    EXPECT_RC(PtlGetPhysId(nm, &id), PTL_OK);
    expect(id.phys.pid == 9, "a process's NIs share its pid");
    EXPECT_RC(PtlEQAlloc(ni, 64, &eq), PTL_OK);
    ptl_handle_eq_t eq_nm;
    EXPECT_RC(PtlEQAlloc(nm, 64, &eq_nm), PTL_OK);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, 5, &pt), PTL_OK);
    expect(pt == 5, "PtlPTAlloc gives the requested index");
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, 5, &pt), PTL_PT_IN_USE);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, PTL_PT_ANY, &pt), PTL_OK);
    expect(pt == 0, "PTL_PT_ANY gives the first free index");
    EXPECT_RC(PtlPTFree(ni, 0), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, PTL_PT_FLOWCTRL, PTL_EQ_NONE, 6, &pt), PTL_PT_EQ_NEEDED);
    ptl_md_t md_bad = {buffer, sizeof buffer, 0, 12345, PTL_CT_NONE};
    ptl_handle_md_t md;
    EXPECT_RC(PtlMDBind(ni, &md_bad, &md), PTL_ARG_INVALID);
    EXPECT_RC(PtlMDBind(PTL_INVALID_HANDLE, &md_bad, &md), PTL_ARG_INVALID);
    EXPECT_RC(PtlEQGet(eq, &(ptl_event_t){0}), PTL_EQ_EMPTY);
    expect(PtlHandleIsEqual(eq, eq) && !PtlHandleIsEqual(eq, eq_nm), "PtlHandleIsEqual");

    ptl_handle_ct_t ct;
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    ptl_ct_event_t count;
    EXPECT_RC(PtlCTGet(ct, &count), PTL_OK);
    expect(count.success == 0 && count.failure == 0, "a new counter is zero");
    EXPECT_RC(PtlCTInc(ct, (ptl_ct_event_t){3, 0}), PTL_OK);
    EXPECT_RC(PtlCTWait(ct, 3, &count), PTL_OK);
    expect(count.success == 3, "PtlCTInc then PtlCTWait");
    EXPECT_RC(PtlCTSet(ct, (ptl_ct_event_t){0, 0}), PTL_OK);

    if (rank == 1) {
        /* Target: a use-once ME (AUTO_UNLINK), an 11-byte ME (truncation) counting bytes,
         * a persistent ME for Get and Atomic, an LE on the non-matching NI. */
        ptl_me_t once = {buffer, 64, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_USE_ONCE,
                         {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 1, 0, 0};
        ptl_me_t truncating = {small, sizeof small, ct, PTL_UID_ANY,
                               PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM | PTL_ME_EVENT_CT_BYTES,
                               {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 2, 0, 0};
        ptl_me_t data = {buffer + 1024, 1024, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_OP_GET,
                         {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0x30, 0x0f, 0};
        ptl_handle_me_t h_once, h_trunc, h_data;
        for (int i = 0; i < 1024; ++i) buffer[1024 + i] = (unsigned char)(i * 3);
        int64_t forty = 40;
        memcpy(buffer + 2040, &forty, sizeof forty);
        EXPECT_RC(PtlMEAppend(ni, 5, &once, PTL_PRIORITY_LIST, (void *)0x1, &h_once), PTL_OK);
        ptl_event_t link = wait_event(PTL_EVENT_LINK);
        expect(link.user_ptr == (void *)0x1 && link.pt_index == 5, "LINK event with user_ptr and pt_index");
        EXPECT_RC(PtlMEAppend(ni, 5, &truncating, PTL_PRIORITY_LIST, NULL, &h_trunc), PTL_OK);
        EXPECT_RC(PtlMEAppend(ni, 5, &data, PTL_PRIORITY_LIST, NULL, &h_data), PTL_OK);
        EXPECT_RC(PtlMEAppend(ni, 77, &data, PTL_PRIORITY_LIST, NULL, &h_data), PTL_ARG_INVALID);
        ptl_pt_index_t pt_nm;
        EXPECT_RC(PtlPTAlloc(nm, 0, eq_nm, 3, &pt_nm), PTL_OK);
        ptl_le_t le = {buffer + 3072, 512, PTL_CT_NONE, PTL_UID_ANY, PTL_LE_OP_PUT};
        ptl_handle_le_t h_le;
        EXPECT_RC(PtlLEAppend(nm, 3, &le, PTL_PRIORITY_LIST, NULL, &h_le), PTL_OK);
        EXPECT_RC(PtlMEAppend(nm, 3, &data, PTL_PRIORITY_LIST, NULL, &h_data), PTL_ARG_INVALID);

        /* 1. A 16-byte put consumes the use-once ME: PUT, then AUTO_UNLINK. */
        ptl_event_t put = wait_event(PTL_EVENT_PUT);
        expect(put.mlength == 16 && put.rlength == 16 && put.hdr_data == 77 && put.match_bits == 1 &&
                   put.initiator.phys.nid == 0 && put.initiator.phys.pid == 9 && put.start == buffer,
               "PUT event fields");
        ptl_event_t unlink = wait_event(PTL_EVENT_AUTO_UNLINK);
        expect(unlink.user_ptr == (void *)0x1, "AUTO_UNLINK of the use-once ME, after its PUT");
        expect(memcmp(buffer, "sixteen bytes!!", 16) == 0, "put data landed");
        /* 2. A 64-byte put into the 11-byte ME is truncated, and counted in bytes. */
        put = wait_event(PTL_EVENT_PUT);
        expect(put.mlength == 11 && put.rlength == 64, "truncated PUT: mlength 11 of rlength 64");
        EXPECT_RC(PtlCTWait(ct, 11, &count), PTL_OK);
        expect(count.success == 11, "CT_COMM | CT_BYTES counted the 11 bytes");
        /* 3. A Get (match bits 0x35 through ignore bits 0x0f) and 4. an Atomic SUM. */
        ptl_event_t get = wait_event(PTL_EVENT_GET);
        expect(get.mlength == 100 && get.remote_offset == 10, "GET event");
        ptl_event_t atomic = wait_event(PTL_EVENT_ATOMIC);
        expect(atomic.mlength == 8, "ATOMIC event");
        int64_t sum;
        memcpy(&sum, buffer + 2040, sizeof sum);
        expect(sum == 42, "atomic SUM applied: 40 + 2");
        /* 5. A put on the non-matching NI lands in the LE. */
        ptl_event_t le_put;
        do {
            EXPECT_RC(PtlEQWait(eq_nm, &le_put), PTL_OK);
        } while (le_put.type != PTL_EVENT_PUT);
        expect(le_put.mlength == 5 && memcmp(buffer + 3072, "hello", 5) == 0, "put through the non-matching NI");
        EXPECT_RC(PtlMEUnlink(h_once), PTL_ARG_INVALID); /* already auto-unlinked */
        EXPECT_RC(PtlMEUnlink(h_trunc), PTL_OK);
    } else {
        ptl_md_t desc = {buffer, sizeof buffer, PTL_MD_EVENT_CT_ACK, eq, ct};
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        EXPECT_RC(PtlPut(md, 0, sizeof buffer + 1, PTL_ACK_REQ, peer, 5, 1, 0, NULL, 0), PTL_ARG_INVALID);
        EXPECT_RC(PtlPut(md, 4000, 100, PTL_ACK_REQ, peer, 5, 1, 0, NULL, 0), PTL_ARG_INVALID);
        /* Knock until the target's MEs are in place: unmatched puts are acknowledged with
         * PTL_NI_DROPPED (match bits 99 match nothing there). */
        for (;;) {
            EXPECT_RC(PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 5, 99, 0, NULL, 0), PTL_OK);
            ptl_event_t ack = wait_event(PTL_EVENT_ACK);
            if (ack.ni_fail_type == PTL_NI_OK) expect(0, "a put matching nothing was acknowledged as OK");
            expect(ack.ni_fail_type == PTL_NI_DROPPED || ack.ni_fail_type == PTL_NI_PT_DISABLED,
                   "an unmatched put is acknowledged with a failure");
            pause_ms(1);
            ptl_ct_event_t c;
            PtlCTGet(ct, &c);
            if (c.failure >= 3) break; /* give the target time to link its entries */
        }
        memcpy(buffer, "sixteen bytes!!", 16);
        EXPECT_RC(PtlPut(md, 0, 16, PTL_ACK_REQ, peer, 5, 1, 0, (void *)0x2, 77), PTL_OK);
        ptl_event_t send = wait_event(PTL_EVENT_SEND);
        expect(send.user_ptr == (void *)0x2 && send.ni_fail_type == PTL_NI_OK, "SEND event");
        ptl_event_t ack = wait_event(PTL_EVENT_ACK);
        expect(ack.ni_fail_type == PTL_NI_OK && ack.mlength == 16, "ACK event");
        EXPECT_RC(PtlPut(md, 0, 64, PTL_ACK_REQ, peer, 5, 2, 0, NULL, 0), PTL_OK);
        ack = wait_event(PTL_EVENT_ACK);
        expect(ack.mlength == 11, "ACK of a truncated put carries mlength");
        EXPECT_RC(PtlGet(md, 512, 100, peer, 5, 0x35, 10, (void *)0x3), PTL_OK);
        ptl_event_t reply = wait_event(PTL_EVENT_REPLY);
        int same = reply.mlength == 100 && reply.user_ptr == (void *)0x3;
        for (int i = 0; i < 100; ++i) same &= buffer[512 + i] == (unsigned char)((i + 10) * 3);
        expect(same, "Get brought the target's bytes");
        int64_t two = 2;
        memcpy(buffer + 8, &two, sizeof two);
        EXPECT_RC(PtlAtomic(md, 8, 8, PTL_ACK_REQ, peer, 5, 0x30, 1016, NULL, 0, PTL_SUM, PTL_INT64_T), PTL_OK);
        wait_event(PTL_EVENT_ACK);
        EXPECT_RC(PtlAtomic(md, 8, 8, PTL_ACK_REQ, peer, 5, 0x30, 0, NULL, 0, PTL_BOR, PTL_DOUBLE), PTL_ARG_INVALID);
        ptl_md_t desc_nm = {buffer, sizeof buffer, 0, eq_nm, PTL_CT_NONE};
        ptl_handle_md_t md_nm;
        EXPECT_RC(PtlMDBind(nm, &desc_nm, &md_nm), PTL_OK);
        memcpy(buffer + 100, "hello", 5);
        EXPECT_RC(PtlPut(md_nm, 100, 5, PTL_NO_ACK_REQ, peer, 3, 0, 0, NULL, 0), PTL_OK);
        PtlCTGet(ct, &count);
        expect(count.success == 3 && count.failure == 3,
               "CT_ACK counted the acknowledgements: 3 successes, the 3 refused knocks as failures only");
    }
    EXPECT_RC(PtlNIFini(nm), PTL_OK);
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
