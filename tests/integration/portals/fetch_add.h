/* A thread's fetch-adds of 1 on a word of another rank (joined_threads.c,
 * lockstep_threads.c): its own counter of replies, the MD of the operand `one` and the MD
 * the old value comes back into (`old`), counted on the replies counter. */
#pragma once
#include <portals4.h>
#include <stdint.h>

#include "must_succeed.h"

struct fetch_add {
    uint64_t one, old;
    ptl_handle_ct_t replies;
    ptl_handle_md_t put_md, get_md;
};

static void fetch_add_bind(ptl_handle_ni_t ni, struct fetch_add* f)
{
    f->one = 1;
    f->old = 0;
    check(PtlCTAlloc(ni, &f->replies), "PtlCTAlloc");
    ptl_md_t put_desc = {&f->one, sizeof f->one, PTL_MD_EVENT_SUCCESS_DISABLE, PTL_EQ_NONE, PTL_CT_NONE};
    ptl_md_t get_desc = {&f->old, sizeof f->old, PTL_MD_EVENT_CT_REPLY | PTL_MD_EVENT_SUCCESS_DISABLE, PTL_EQ_NONE,
                         f->replies};
    check(PtlMDBind(ni, &put_desc, &f->put_md), "PtlMDBind");
    check(PtlMDBind(ni, &get_desc, &f->get_md), "PtlMDBind");
}

/* The `round`-th fetch-add (from 1): waits for its reply; false if it failed. */
static int fetch_add_round(struct fetch_add* f, ptl_process_t peer, ptl_pt_index_t pt, ptl_size_t round)
{
    ptl_ct_event_t count;
    check(PtlFetchAtomic(f->get_md, 0, f->put_md, 0, sizeof f->one, peer, pt, 0, 0, NULL, 0, PTL_SUM, PTL_UINT64_T),
          "PtlFetchAtomic");
    check(PtlCTWait(f->replies, round, &count), "PtlCTWait");
    return count.failure == 0;
}

static void fetch_add_release(struct fetch_add* f)
{
    PtlMDRelease(f->put_md);
    PtlMDRelease(f->get_md);
    PtlCTFree(f->replies);
}
