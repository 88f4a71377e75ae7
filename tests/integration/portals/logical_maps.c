/* Logical NIs whose map does not follow the launch order. Every process publishes the
 * physical id of its NIs (PMI), then sets the same map on a matching and a non-matching
 * logical NI:
 *
 *   reversed   logical rank i is launch rank size-1-i
 *   rotated    logical rank i is launch rank (i+1) mod size
 *
 * Each process sends to its logical successor and receives from its logical predecessor
 * P. A target event names its initiator by its rank in the target's map, P, never by its
 * launch rank L (which differs from P in both maps): PUT, GET, ATOMIC, FETCH_ATOMIC, their
 * overflow kinds, SEARCH (PtlMESearch, PtlLESearch). An entry reserved to rank L (match_id)
 * matches nothing; the one reserved to P matches every operation, and so do searches and
 * appends against unexpected headers.
 * Run on 2 or 4 ranks, under either CPU model; the exit status is the verdict. */
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

#define PRIORITY_PT 1  /* the entries reserved to L (first) and to P */
#define OVERFLOW_PT 2  /* an overflow entry only, until the program appends one */
#define LE_PT 3        /* the same on the non-matching NI */
#define RIGHT ((void *)0x600d)
#define WRONG ((void *)0xbad)
#define OPS 4

static char what[256];
static const char *say(const char *format, int value)
{
    snprintf(what, sizeof what, format, value);
    return what;
}

static ptl_event_t next_event(ptl_handle_eq_t eq)
{
    ptl_event_t event;
    EXPECT_RC(PtlEQWait(eq, &event), PTL_OK);
    return event;
}

static void barrier(void)
{
    if (PMI_Barrier() != PMI_SUCCESS) expect(0, "PMI_Barrier");
}

static const char *kind_name(ptl_event_kind_t kind)
{
    switch (kind) {
    case PTL_EVENT_PUT: return "PUT";
    case PTL_EVENT_GET: return "GET";
    case PTL_EVENT_ATOMIC: return "ATOMIC";
    case PTL_EVENT_FETCH_ATOMIC: return "FETCH_ATOMIC";
    case PTL_EVENT_PUT_OVERFLOW: return "PUT_OVERFLOW";
    case PTL_EVENT_GET_OVERFLOW: return "GET_OVERFLOW";
    case PTL_EVENT_ATOMIC_OVERFLOW: return "ATOMIC_OVERFLOW";
    case PTL_EVENT_FETCH_ATOMIC_OVERFLOW: return "FETCH_ATOMIC_OVERFLOW";
    case PTL_EVENT_SEARCH: return "SEARCH";
    default: return "another event";
    }
}

/* The next `count` events, in any order: each one of `kinds` (with `lists` and
 * `user_ptrs`, one event for each), all from logical rank `from`, without failure. */
static void expect_events(ptl_handle_eq_t eq, int count, const ptl_event_kind_t *kinds, const ptl_list_t *lists,
                          void *const *user_ptrs, ptl_rank_t from, const char *where)
{
    int seen[2 * OPS] = {0};
    for (int n = 0; n < count; ++n) {
        ptl_event_t event = next_event(eq);
        char text[240];
        snprintf(text, sizeof text, "%s: %s from logical rank %d (got %d), fail type %d", where,
                 kind_name(event.type), (int)from, (int)event.initiator.rank, (int)event.ni_fail_type);
        expect(event.initiator.rank == from && event.ni_fail_type == PTL_NI_OK, text);
        int k = 0;
        while (k < count && (seen[k] || event.type != kinds[k] || event.ptl_list != lists[k] ||
                             event.user_ptr != user_ptrs[k]))
            ++k;
        expect(k < count, "... one of the events expected, in the list and the entry expected");
        seen[k] = 1;
    }
}

/* Put, Get, Atomic and FetchAtomic from `md` to `target`, all acknowledged or answered. */
static void four_operations(ptl_handle_md_t md, ptl_handle_eq_t eq, ptl_process_t target, ptl_pt_index_t pt)
{
    EXPECT_RC(PtlPut(md, 0, 8, PTL_ACK_REQ, target, pt, 7, 0, NULL, 0), PTL_OK);
    EXPECT_RC(PtlGet(md, 8, 8, target, pt, 7, 8, NULL), PTL_OK);
    EXPECT_RC(PtlAtomic(md, 16, 8, PTL_ACK_REQ, target, pt, 7, 16, NULL, 0, PTL_SUM, PTL_UINT64_T), PTL_OK);
    EXPECT_RC(PtlFetchAtomic(md, 32, md, 24, 8, target, pt, 7, 24, NULL, 0, PTL_SUM, PTL_UINT64_T), PTL_OK);
    int acks = 0, replies = 0;
    while (acks + replies < OPS) {
        ptl_event_t event = next_event(eq);
        if (event.type == PTL_EVENT_SEND) continue;
        expect((event.type == PTL_EVENT_ACK || event.type == PTL_EVENT_REPLY) && event.ni_fail_type == PTL_NI_OK,
               say("pt %d: an operation acknowledged or answered without failure", (int)pt));
        acks += event.type == PTL_EVENT_ACK;
        replies += event.type == PTL_EVENT_REPLY;
    }
    expect(acks == 2 && replies == 2, "two ACKs, two REPLYs");
}

int main(int argc, char **argv)
{
    int spawned, size;
    int rotated = argc == 2 && strcmp(argv[1], "rotated") == 0;
    if (argc != 2 || (!rotated && strcmp(argv[1], "reversed") != 0)) {
        fprintf(stderr, "usage: logical_maps reversed|rotated\n");
        return 2;
    }
    EXPECT_RC(PMI_Init(&spawned), PMI_SUCCESS);
    EXPECT_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    EXPECT_RC(PMI_Get_size(&size), PMI_SUCCESS);
    char name[64], key[64], value[64];
    EXPECT_RC(PMI_KVS_Get_my_name(name, sizeof name), PMI_SUCCESS);

    ptl_handle_ni_t ni, nm;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL, &nm), PTL_OK);
    ptl_process_t me;
    EXPECT_RC(PtlGetPhysId(ni, &me), PTL_OK);
    snprintf(key, sizeof key, "phys-%d", rank);
    snprintf(value, sizeof value, "%u %u", (unsigned)me.phys.nid, (unsigned)me.phys.pid);
    EXPECT_RC(PMI_KVS_Put(name, key, value), PMI_SUCCESS);
    EXPECT_RC(PMI_KVS_Commit(name), PMI_SUCCESS);
    barrier();
    ptl_process_t *map = calloc(size, sizeof *map);
    for (int i = 0; i < size; ++i) {
        int launch = rotated ? (i + 1) % size : size - 1 - i;
        unsigned nid, pid;
        snprintf(key, sizeof key, "phys-%d", launch);
        EXPECT_RC(PMI_KVS_Get(name, key, value, sizeof value), PMI_SUCCESS);
        expect(sscanf(value, "%u %u", &nid, &pid) == 2, "a peer's physical id reads back");
        map[i].phys.nid = nid;
        map[i].phys.pid = pid;
    }
    EXPECT_RC(PtlSetMap(ni, size, map), PTL_OK);
    EXPECT_RC(PtlSetMap(nm, size, map), PTL_OK);
    const ptl_rank_t self = rotated ? (rank - 1 + size) % size : size - 1 - rank;
    const ptl_rank_t successor = (self + 1) % size, predecessor = (self - 1 + size) % size;
    /* The predecessor's launch rank, as a logical rank: another process, never P. */
    const ptl_rank_t launch_of_predecessor = rotated ? (predecessor + 1) % size : size - 1 - predecessor;
    ptl_process_t id;
    EXPECT_RC(PtlGetId(ni, &id), PTL_OK);
    expect(id.rank == self, say("PtlGetId gives the rank in the map, %d", (int)self));

    /* The target side. */
    static uint64_t exposed[8], overflow[8], le_overflow[8], claimed[8], le_claimed[8];
    ptl_handle_eq_t pt_eq, nm_eq, md_eq, nm_md_eq;
    EXPECT_RC(PtlEQAlloc(ni, 64, &pt_eq), PTL_OK);
    EXPECT_RC(PtlEQAlloc(nm, 64, &nm_eq), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 64, &md_eq), PTL_OK);
    EXPECT_RC(PtlEQAlloc(nm, 64, &nm_md_eq), PTL_OK);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, pt_eq, PRIORITY_PT, &pt), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, pt_eq, OVERFLOW_PT, &pt), PTL_OK);
    EXPECT_RC(PtlPTAlloc(nm, 0, nm_eq, LE_PT, &pt), PTL_OK);
    const unsigned int quiet = PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE;
    ptl_me_t reserved = {exposed, sizeof exposed, PTL_CT_NONE, PTL_UID_ANY, quiet, {.rank = launch_of_predecessor},
                         7, 0, 0};
    ptl_handle_me_t handle;
    EXPECT_RC(PtlMEAppend(ni, PRIORITY_PT, &reserved, PTL_PRIORITY_LIST, WRONG, &handle), PTL_OK);
    reserved.match_id.rank = predecessor;
    EXPECT_RC(PtlMEAppend(ni, PRIORITY_PT, &reserved, PTL_PRIORITY_LIST, RIGHT, &handle), PTL_OK);
    ptl_me_t any = {overflow, sizeof overflow, PTL_CT_NONE, PTL_UID_ANY, quiet, {.rank = PTL_RANK_ANY}, 7, 0, 0};
    EXPECT_RC(PtlMEAppend(ni, OVERFLOW_PT, &any, PTL_OVERFLOW_LIST, NULL, &handle), PTL_OK);
    ptl_le_t le = {le_overflow, sizeof le_overflow, PTL_CT_NONE, PTL_UID_ANY, quiet};
    ptl_handle_le_t le_handle;
    EXPECT_RC(PtlLEAppend(nm, LE_PT, &le, PTL_OVERFLOW_LIST, NULL, &le_handle), PTL_OK);

    /* The initiator side. */
    static uint64_t source[5] = {1, 2, 3, 4, 0};
    ptl_md_t desc = {source, sizeof source, 0, md_eq, PTL_CT_NONE};
    ptl_handle_md_t md, nm_md;
    EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
    desc.eq_handle = nm_md_eq;
    EXPECT_RC(PtlMDBind(nm, &desc, &nm_md), PTL_OK);
    barrier();  /* every entry in place */

    ptl_process_t target = {.rank = successor};
    four_operations(md, md_eq, target, PRIORITY_PT);
    four_operations(md, md_eq, target, OVERFLOW_PT);
    EXPECT_RC(PtlPut(nm_md, 0, 8, PTL_ACK_REQ, target, LE_PT, 0, 0, NULL, 0), PTL_OK);
    ptl_event_t ack;
    do ack = next_event(nm_md_eq); while (ack.type == PTL_EVENT_SEND);
    expect(ack.type == PTL_EVENT_ACK && ack.ni_fail_type == PTL_NI_OK, "the Put to the LE acknowledged");

    /* Arrivals: into the entry reserved to P, and into the overflow entry. */
    const ptl_event_kind_t arrivals[2 * OPS] = {PTL_EVENT_PUT, PTL_EVENT_GET, PTL_EVENT_ATOMIC, PTL_EVENT_FETCH_ATOMIC,
                                                PTL_EVENT_PUT, PTL_EVENT_GET, PTL_EVENT_ATOMIC, PTL_EVENT_FETCH_ATOMIC};
    const ptl_list_t arrival_lists[2 * OPS] = {PTL_PRIORITY_LIST, PTL_PRIORITY_LIST, PTL_PRIORITY_LIST,
                                               PTL_PRIORITY_LIST, PTL_OVERFLOW_LIST, PTL_OVERFLOW_LIST,
                                               PTL_OVERFLOW_LIST, PTL_OVERFLOW_LIST};
    void *const arrival_ptrs[2 * OPS] = {RIGHT, RIGHT, RIGHT, RIGHT, NULL, NULL, NULL, NULL};
    expect_events(pt_eq, 2 * OPS, arrivals, arrival_lists, arrival_ptrs, predecessor, "arrival");
    expect_events(nm_eq, 1, arrivals, arrival_lists + OPS, arrival_ptrs + OPS, predecessor, "arrival at the LE");
    expect(exposed[0] == 1 && exposed[2] == 3 && exposed[3] == 4, "the operations wrote the entry reserved to P");

    /* Searches and appends against the unexpected headers. */
    ptl_me_t probe = any;
    probe.match_id.rank = launch_of_predecessor;
    EXPECT_RC(PtlMESearch(ni, OVERFLOW_PT, &probe, PTL_SEARCH_ONLY, WRONG), PTL_OK);
    ptl_event_t none = next_event(pt_eq);
    expect(none.type == PTL_EVENT_SEARCH && none.ni_fail_type == PTL_NI_NO_MATCH,
           "a search for the predecessor's launch rank finds no header");
    probe.match_id.rank = predecessor;
    EXPECT_RC(PtlMESearch(ni, OVERFLOW_PT, &probe, PTL_SEARCH_ONLY, RIGHT), PTL_OK);
    const ptl_event_kind_t searches[OPS] = {PTL_EVENT_SEARCH, PTL_EVENT_SEARCH, PTL_EVENT_SEARCH, PTL_EVENT_SEARCH};
    const ptl_list_t overflow_lists[OPS] = {PTL_OVERFLOW_LIST, PTL_OVERFLOW_LIST, PTL_OVERFLOW_LIST,
                                            PTL_OVERFLOW_LIST};
    void *const right_ptrs[OPS] = {RIGHT, RIGHT, RIGHT, RIGHT};
    expect_events(pt_eq, OPS, searches, overflow_lists, right_ptrs, predecessor, "PtlMESearch");
    EXPECT_RC(PtlLESearch(nm, LE_PT, &le, PTL_SEARCH_ONLY, RIGHT), PTL_OK);
    expect_events(nm_eq, 1, searches, overflow_lists, right_ptrs, predecessor, "PtlLESearch");

    ptl_me_t wrong = any;
    wrong.start = claimed;
    wrong.match_id.rank = launch_of_predecessor;
    EXPECT_RC(PtlMEAppend(ni, OVERFLOW_PT, &wrong, PTL_PRIORITY_LIST, WRONG, &handle), PTL_OK);
    ptl_me_t right = wrong;
    right.match_id.rank = predecessor;
    EXPECT_RC(PtlMEAppend(ni, OVERFLOW_PT, &right, PTL_PRIORITY_LIST, RIGHT, &handle), PTL_OK);
    const ptl_event_kind_t claims[OPS] = {PTL_EVENT_PUT_OVERFLOW, PTL_EVENT_GET_OVERFLOW, PTL_EVENT_ATOMIC_OVERFLOW,
                                          PTL_EVENT_FETCH_ATOMIC_OVERFLOW};
    expect_events(pt_eq, OPS, claims, overflow_lists, right_ptrs, predecessor, "an ME append claims the headers");
    le.start = le_claimed;
    EXPECT_RC(PtlLEAppend(nm, LE_PT, &le, PTL_PRIORITY_LIST, RIGHT, &le_handle), PTL_OK);
    expect_events(nm_eq, 1, claims, overflow_lists, right_ptrs, predecessor, "an LE append claims the header");
    ptl_event_t event;
    expect(PtlEQGet(pt_eq, &event) == PTL_EQ_EMPTY && PtlEQGet(nm_eq, &event) == PTL_EQ_EMPTY,
           "no other event");

    barrier();  /* everybody checked: nothing is in flight */
    EXPECT_RC(PtlNIFini(nm), PTL_OK);
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    EXPECT_RC(PMI_Finalize(), PMI_SUCCESS);
    free(map);
    return 0;
}
