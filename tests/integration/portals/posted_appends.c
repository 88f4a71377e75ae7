/* List appends the rank posts without waiting (docs/time.md "Posted commands"): the rank
 * chooses each entry's handle, the server adopts it, and frees it when the entry goes while
 * the rank runs. Whatever is posted, a program sees what the server would have answered:
 *
 * - rank 0 fills a portal table entry to max_list_size (PTL_LIST_TOO_LONG after), then its
 *   NI to max_entries (PTL_NO_SPACE after), every handle one the server knows and can
 *   unlink once;
 * - rank 1's puts consume rank 0's use-once entries; their handles are then unknown to the
 *   server, and given again to new entries;
 * - rank 1 streams puts while rank 0 appends a use-once entry for each, now and then late:
 *   a message finds its entry, or waits in the overflow list and is claimed when the
 *   entry comes (consumed at its append). Each entry is consumed exactly once;
 * - LEs of a non-matching NI, likewise.
 *
 * The check script runs it under both CPU models (appends are posted under the zero one
 * only) and reads the run summary. Rank 1 puts only after a PMI barrier at which rank 0's
 * lists are ready: under the measured CPU model rank 0's set-up is the host's CPU time,
 * which a loaded machine has stretched past the simulated millisecond rank 1 used to sleep
 * (its puts found no entry and rank 0 waited for them for good). */
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "entries.h"
#include "../test_checks.h"

enum { PID = 9, PT_FULL = 1, PT_SPARE = 2, PT_STREAM = 3, LIST = 6, ENTRIES = 12, MESSAGES = 200, AHEAD = 4 };

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

/* Both ranks at the same point: rank 0's lists are ready for rank 1's puts. */
static void ready(void)
{
    expect(PMI_Barrier() == PMI_SUCCESS, "PMI_Barrier");
}

static ptl_me_t use_once(ptl_match_bits_t bits)
{
    ptl_me_t me = any_source_entry(NULL, 0, PTL_CT_NONE, PTL_ME_OP_PUT | PTL_ME_USE_ONCE | PTL_ME_EVENT_LINK_DISABLE);
    me.match_bits = bits;
    return me;
}

static int known_to_server(ptl_handle_me_t h)
{
    ptl_handle_ni_t owner;
    return PtlNIHandle(h, &owner) == PTL_OK && owner == ni;
}

/* Rank 0: a list to max_list_size, the NI to max_entries, then rank 1's puts consume the
 * first list's entries. */
static void limits_and_consumption(void)
{
    ptl_handle_me_t full[LIST], spare[ENTRIES - LIST], h;
    for (int i = 0; i < LIST; ++i) {
        ptl_me_t me = use_once((ptl_match_bits_t)i);
        expect(PtlMEAppend(ni, PT_FULL, &me, PTL_PRIORITY_LIST, (void *)(uintptr_t)(i + 1), &full[i]) == PTL_OK,
               "append up to max_list_size");
    }
    ptl_me_t me = use_once(99);
    EXPECT_RC(PtlMEAppend(ni, PT_FULL, &me, PTL_OVERFLOW_LIST, NULL, &h), PTL_LIST_TOO_LONG);
    for (int i = 0; i < ENTRIES - LIST; ++i)
        expect(PtlMEAppend(ni, PT_SPARE, &me, PTL_PRIORITY_LIST, NULL, &spare[i]) == PTL_OK,
               "append up to max_entries");
    EXPECT_RC(PtlMEAppend(ni, PT_STREAM, &me, PTL_PRIORITY_LIST, NULL, &h), PTL_NO_SPACE);
    int distinct = 1, known = 1;
    for (int i = 0; i < ENTRIES; ++i) {
        ptl_handle_me_t a = i < LIST ? full[i] : spare[i - LIST];
        known &= known_to_server(a);
        for (int j = 0; j < i; ++j) distinct &= a != (j < LIST ? full[j] : spare[j - LIST]);
    }
    expect(distinct, "every entry has its own handle");
    expect(known, "the server knows every handle the rank gave out");
    for (int i = 0; i < ENTRIES - LIST; ++i) EXPECT_RC(PtlMEUnlink(spare[i]), PTL_OK);
    for (int i = 0; i < ENTRIES - LIST; ++i) EXPECT_RC(PtlMEUnlink(spare[i]), PTL_ARG_INVALID);

    /* Rank 1's puts (match bits 0 to LIST - 1) consume the first list. */
    ready();
    int seen = 0;
    while (seen < LIST) {
        ptl_event_t event;
        expect(PtlEQWait(eq, &event) == PTL_OK, "PtlEQWait");
        if (event.type == PTL_EVENT_PUT) ++seen;
    }
    for (int i = 0; i < LIST; ++i) EXPECT_RC(PtlMEUnlink(full[i]), PTL_ARG_INVALID);
    int reused = 0;
    for (int i = 0; i < LIST; ++i) {
        ptl_me_t again = use_once(1000 + (ptl_match_bits_t)i);
        expect(PtlMEAppend(ni, PT_FULL, &again, PTL_PRIORITY_LIST, NULL, &h) == PTL_OK, "append again");
        for (int j = 0; j < LIST; ++j) reused += h == full[j];
        expect(known_to_server(h), "the server knows the new handle");
        EXPECT_RC(PtlMEUnlink(h), PTL_OK);
    }
    expect(reused == LIST, "the handles of consumed entries are given again");
}

/* Rank 0: one use-once entry for each of rank 1's MESSAGES puts, at most AHEAD of them
 * waiting, and now and then late, after its message has landed in the overflow list. */
static int matched[MESSAGES], waiting, direct, claimed, landed;

static void take(const ptl_event_t *event)
{
    int index = (int)(uintptr_t)event->user_ptr - 1;
    if (event->type == PTL_EVENT_PUT && event->ptl_list == PTL_OVERFLOW_LIST) {
        ++landed;
        return;
    }
    if (event->type != PTL_EVENT_PUT && event->type != PTL_EVENT_PUT_OVERFLOW) return;
    expect(index >= 0 && index < MESSAGES && event->match_bits == (ptl_match_bits_t)index, "the event is its entry's");
    ++matched[index];
    --waiting;
    if (event->type == PTL_EVENT_PUT) ++direct;
    else ++claimed;
}

static void wait_one(void)
{
    ptl_event_t event;
    expect(PtlEQWait(eq, &event) == PTL_OK, "PtlEQWait");
    take(&event);
}

static void stream(void)
{
    static ptl_handle_me_t handles[MESSAGES];
    ptl_me_t bucket = any_source_entry(NULL, 0, PTL_CT_NONE, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE);
    bucket.ignore_bits = ~0ull;
    ptl_handle_me_t h;
    EXPECT_RC(PtlMEAppend(ni, PT_STREAM, &bucket, PTL_OVERFLOW_LIST, NULL, &h), PTL_OK);
    ready();
    ptl_event_t event;
    for (int k = 0; k < MESSAGES; ++k) {
        while (PtlEQGet(eq, &event) == PTL_OK) take(&event);
        while (waiting >= AHEAD) wait_one();
        if (k % 25 == 12) usleep(60); /* late: rank 1's next puts land in the overflow list */
        ptl_me_t me = use_once((ptl_match_bits_t)k);
        expect(PtlMEAppend(ni, PT_STREAM, &me, PTL_PRIORITY_LIST, (void *)(uintptr_t)(k + 1), &handles[k]) == PTL_OK,
               "append while messages arrive");
        ++waiting;
    }
    while (waiting > 0) wait_one();
    int once = 1;
    for (int k = 0; k < MESSAGES; ++k) once &= matched[k] == 1;
    printf("rank 0: %d messages found their entry, %d were claimed at append (%d landed in the overflow list)\n",
           direct, claimed, landed);
    expect(once, "each entry is consumed exactly once");
    expect(claimed == landed, "each message of the overflow list was claimed once");
    expect(direct > 0 && claimed > 0, "messages both found their entry and waited for it");
    int gone = 1;
    for (int k = 0; k < MESSAGES; ++k) gone &= PtlMEUnlink(handles[k]) == PTL_ARG_INVALID;
    expect(gone, "no consumed entry's handle is left to unlink");
    EXPECT_RC(PtlMEUnlink(h), PTL_OK);
}

/* Rank 0: LEs of a non-matching NI. */
static void list_entries(void)
{
    ptl_handle_ni_t le_ni;
    ptl_pt_index_t pt;
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &le_ni), PTL_OK);
    EXPECT_RC(PtlPTAlloc(le_ni, 0, PTL_EQ_NONE, PTL_PT_ANY, &pt), PTL_OK);
    ptl_le_t le = {NULL, 0, PTL_CT_NONE, PTL_UID_ANY, PTL_LE_OP_PUT};
    ptl_handle_le_t a, b;
    EXPECT_RC(PtlLEAppend(le_ni, pt, &le, PTL_PRIORITY_LIST, NULL, &a), PTL_OK);
    EXPECT_RC(PtlLEAppend(le_ni, pt, &le, PTL_PRIORITY_LIST, NULL, &b), PTL_OK);
    ptl_me_t me = use_once(0);
    ptl_handle_me_t h;
    EXPECT_RC(PtlMEAppend(le_ni, pt, &me, PTL_PRIORITY_LIST, NULL, &h), PTL_ARG_INVALID);
    ptl_handle_ni_t owner;
    expect(a != b && PtlNIHandle(a, &owner) == PTL_OK && owner == le_ni && PtlNIHandle(b, &owner) == PTL_OK &&
               owner == le_ni,
           "the server knows both LEs' handles");
    EXPECT_RC(PtlLEUnlink(a), PTL_OK);
    EXPECT_RC(PtlLEUnlink(b), PTL_OK);
    EXPECT_RC(PtlLEUnlink(a), PTL_ARG_INVALID);
    EXPECT_RC(PtlPTFree(le_ni, pt), PTL_OK);
    EXPECT_RC(PtlLEAppend(le_ni, pt, &le, PTL_PRIORITY_LIST, NULL, &a), PTL_ARG_INVALID);
    EXPECT_RC(PtlNIFini(le_ni), PTL_OK);
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    ptl_ni_limits_t desired = {0};
    desired.max_list_size = LIST;
    desired.max_entries = ENTRIES;
    int spawned;
    EXPECT_RC(PMI_Init(&spawned), PMI_SUCCESS);
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, &desired, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 1024, &eq), PTL_OK);
    if (rank == 0) {
        for (ptl_pt_index_t pt = PT_FULL; pt <= PT_STREAM; ++pt) {
            ptl_pt_index_t got;
            EXPECT_RC(PtlPTAlloc(ni, 0, eq, pt, &got), PTL_OK);
        }
        limits_and_consumption();
        stream();
        list_entries();
    } else {
        ptl_handle_ct_t sent;
        EXPECT_RC(PtlCTAlloc(ni, &sent), PTL_OK);
        ptl_md_t desc = {NULL, 0, PTL_MD_EVENT_CT_SEND, PTL_EQ_NONE, sent};
        ptl_handle_md_t md;
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        ptl_process_t peer = {.phys = {0, PID}};
        ready();
        usleep(1000); /* simulated: rank 0's appends have reached its NIC */
        for (int i = 0; i < LIST; ++i) EXPECT_RC(PtlPut(md, 0, 0, PTL_NO_ACK_REQ, peer, PT_FULL, i, 0, NULL, 0), PTL_OK);
        ready();
        usleep(1000); /* rank 0 has set up its stream */
        for (int k = 0; k < MESSAGES; ++k) {
            if (PtlPut(md, 0, 0, PTL_NO_ACK_REQ, peer, PT_STREAM, k, 0, NULL, 0) != PTL_OK) expect(0, "PtlPut");
            usleep(5);
        }
        ptl_ct_event_t count;
        expect(PtlCTWait(sent, LIST + MESSAGES, &count) == PTL_OK && count.failure == 0, "every put has left");
        puts("rank 1 ok");
    }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
