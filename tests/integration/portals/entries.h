/* The list entry most test programs append: it accepts puts from any process into
 * `length` bytes at `start`, counted on `ct` (PTL_CT_NONE: none), with `options`
 * (PTL_ME_OP_PUT and event flags), match bits 0. */
#ifndef S4BXI_TEST_ENTRIES_H
#define S4BXI_TEST_ENTRIES_H
#include <portals4.h>

static inline ptl_me_t any_source_entry(void *start, ptl_size_t length, ptl_handle_ct_t ct, unsigned int options)
{
    ptl_me_t entry = {0};
    entry.start = start;
    entry.length = length;
    entry.ct_handle = ct;
    entry.uid = PTL_UID_ANY;
    entry.options = options;
    entry.match_id.phys.nid = PTL_NID_ANY;
    entry.match_id.phys.pid = PTL_PID_ANY;
    return entry;
}

#endif
