/* Fetch-adds of 1 by the threads of one rank on a word of the other (joined_threads.c,
 * lockstep_threads.c), on 2 ranks. A thread has its own counter of replies, the MD of the
 * operand `one` and the MD the old value comes back into (`old`), counted on the replies
 * counter. */
#pragma once
#include <pmi.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../test_checks.h"

/* A PMI barrier of both ranks; the program stops with status 2 if it fails. */
static void pmi_barrier_or_exit(const char* program)
{
    if (PMI_Barrier() != PMI_SUCCESS) {
        fprintf(stderr, "%s: PMI barrier failed\n", program);
        exit(2);
    }
}

/* Rank `rank`'s side of it: a physical NI with `pid`, `word` exposed on PT `pt` for the
 * peer's fetch-adds, and a PMI barrier after which both words are exposed. Returns the
 * peer. */
static ptl_process_t fetch_add_expose(const char* program, int rank, ptl_pid_t pid, ptl_pt_index_t pt,
                                      uint64_t* word, ptl_handle_ni_t* ni)
{
    ptl_pt_index_t allocated;
    ptl_handle_le_t le;
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL, pid, NULL, NULL, ni), "PtlNIInit");
    must_succeed(PtlPTAlloc(*ni, 0, PTL_EQ_NONE, pt, &allocated), "PtlPTAlloc");
    ptl_le_t target = {word, sizeof *word, PTL_CT_NONE, PTL_UID_ANY,
                       PTL_LE_OP_PUT | PTL_LE_OP_GET | PTL_LE_EVENT_COMM_DISABLE | PTL_LE_EVENT_LINK_DISABLE};
    must_succeed(PtlLEAppend(*ni, allocated, &target, PTL_PRIORITY_LIST, NULL, &le), "PtlLEAppend");
    ptl_process_t peer;
    peer.phys.nid = (ptl_nid_t)(rank ^ 1);
    peer.phys.pid = pid;
    int spawned;
    if (PMI_Init(&spawned) != PMI_SUCCESS) {
        fprintf(stderr, "%s: PMI_Init failed\n", program);
        exit(2);
    }
    pmi_barrier_or_exit(program);
    return peer;
}

struct fetch_add {
    uint64_t one, old;
    ptl_handle_ct_t replies;
    ptl_handle_md_t put_md, get_md;
};

static void fetch_add_bind(ptl_handle_ni_t ni, struct fetch_add* f)
{
    f->one = 1;
    f->old = 0;
    must_succeed(PtlCTAlloc(ni, &f->replies), "PtlCTAlloc");
    ptl_md_t put_desc = {&f->one, sizeof f->one, PTL_MD_EVENT_SUCCESS_DISABLE, PTL_EQ_NONE, PTL_CT_NONE};
    ptl_md_t get_desc = {&f->old, sizeof f->old, PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_SUCCESS_DISABLE, PTL_EQ_NONE,
                         f->replies};
    must_succeed(PtlMDBind(ni, &put_desc, &f->put_md), "PtlMDBind");
    must_succeed(PtlMDBind(ni, &get_desc, &f->get_md), "PtlMDBind");
}

/* The `round`-th fetch-add (from 1): waits for its reply; false if it failed. */
static int fetch_add_round(struct fetch_add* f, ptl_process_t peer, ptl_pt_index_t pt, ptl_size_t round)
{
    ptl_ct_event_t count;
    must_succeed(PtlFetchAtomic(f->get_md, 0, f->put_md, 0, sizeof f->one, peer, pt, 0, 0, NULL, 0, PTL_SUM, PTL_UINT64_T),
          "PtlFetchAtomic");
    must_succeed(PtlCTWait(f->replies, round, &count), "PtlCTWait");
    return count.failure == 0;
}

static void fetch_add_release(struct fetch_add* f)
{
    PtlMDRelease(f->put_md);
    PtlMDRelease(f->get_md);
    PtlCTFree(f->replies);
}
