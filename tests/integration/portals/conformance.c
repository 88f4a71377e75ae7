/* Return codes of the specification, one function at a time, on one rank (messages go
 * to itself through its own NIC): uninitialized library, bad handles, null pointers,
 * bad options, limits, in-use resources, dropped events, counter failures. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../test_checks.h"

int main(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq, small_eq;
    ptl_handle_ct_t ct;
    ptl_handle_md_t md;
    ptl_handle_me_t me_h;
    ptl_event_t event;
    ptl_ct_event_t count;
    ptl_pt_index_t pt;
    ptl_process_t self;
    static char buffer[256];
    unsigned int which;

    /* Before PtlInit: everything says PTL_NO_INIT. */
    CHECK(PtlEQAlloc(0, 8, &eq) == PTL_NO_INIT);
    CHECK(PtlCTAlloc(0, &ct) == PTL_NO_INIT);
    CHECK(PtlInit() == PTL_OK);
    CHECK(PtlInit() == PTL_OK); /* reference counted */
    PtlFini();

    /* PtlNIInit */
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, NULL) == PTL_ARG_INVALID);
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &ni) == PTL_ARG_INVALID);
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, 1 << 20, PTL_PID_ANY, NULL, NULL, &ni) == PTL_ARG_INVALID);
    ptl_ni_limits_t desired = {0}, actual;
    desired.max_mds = 2;
    desired.max_list_size = 2;
    desired.max_eqs = 3;
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, &desired, &actual, &ni) == PTL_OK);
    CHECK(actual.max_mds == 2 && actual.max_list_size == 2 && actual.max_eqs == 3);
    ptl_handle_ni_t again;
    CHECK(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &again) == PTL_OK &&
          PtlHandleIsEqual(again, ni));
    CHECK(PtlGetPhysId(ni, &self) == PTL_OK);
    CHECK(PtlGetPhysId(ni, NULL) == PTL_ARG_INVALID);
    CHECK(PtlGetId(PTL_INVALID_HANDLE, &self) == PTL_ARG_INVALID);
    ptl_uid_t uid;
    CHECK(PtlGetUid(ni, &uid) == PTL_OK);
    ptl_sr_value_t status;
    CHECK(PtlNIStatus(ni, PTL_SR_LAST, &status) == PTL_ARG_INVALID);
    CHECK(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &status) == PTL_OK && status == 0);
    CHECK(PtlSetMap(ni, 1, &self) == PTL_ARG_INVALID); /* a physical NI has no map */

    /* EQs, including one that overflows. */
    CHECK(PtlEQAlloc(ni, 64, NULL) == PTL_ARG_INVALID);
    CHECK(PtlEQAlloc(ni, 64, &eq) == PTL_OK);
    CHECK(PtlEQAlloc(ni, 1, &small_eq) == PTL_OK);
    ptl_handle_eq_t third, fourth;
    CHECK(PtlEQAlloc(ni, 1, &third) == PTL_OK);
    CHECK(PtlEQAlloc(ni, 1, &fourth) == PTL_NO_SPACE); /* max_eqs 3 */
    CHECK(PtlEQFree(third) == PTL_OK);
    CHECK(PtlEQFree(third) == PTL_ARG_INVALID);
    CHECK(PtlEQGet(eq, &event) == PTL_EQ_EMPTY);
    CHECK(PtlEQGet(PTL_EQ_NONE, &event) == PTL_ARG_INVALID);
    CHECK(PtlEQPoll(&eq, 1, 0, &event, &which) == PTL_EQ_EMPTY);
    CHECK(PtlEQPoll(&eq, 0, 0, &event, &which) == PTL_ARG_INVALID);
    CHECK(PtlEQPoll(&eq, 1, 5, &event, &which) == PTL_EQ_EMPTY); /* 5 ms of simulated time */

    /* PTs */
    CHECK(PtlPTAlloc(ni, 0, eq, 256, &pt) == PTL_ARG_INVALID); /* beyond max_pt_index */
    CHECK(PtlPTAlloc(ni, 1 << 10, eq, 0, &pt) == PTL_ARG_INVALID);
    CHECK(PtlPTAlloc(ni, 0, 0x12345, 0, &pt) == PTL_ARG_INVALID);
    CHECK(PtlPTAlloc(ni, 0, eq, 0, &pt) == PTL_OK);
    CHECK(PtlPTDisable(ni, 1) == PTL_ARG_INVALID);
    CHECK(PtlPTFree(ni, 1) == PTL_ARG_INVALID);

    /* PTL_PT_ONLY_USE_ONCE / ONLY_TRUNCATE are hints: entries that do not follow them are
     * still accepted (Open MPI relies on it). */
    ptl_pt_index_t hinted;
    CHECK(PtlPTAlloc(ni, PTL_PT_ONLY_USE_ONCE | PTL_PT_ONLY_TRUNCATE, eq, 10, &hinted) == PTL_OK);
    ptl_me_t persistent = {buffer, 8, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_NO_TRUNCATE,
                           {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    ptl_handle_me_t hinted_me;
    CHECK(PtlMEAppend(ni, hinted, &persistent, PTL_OVERFLOW_LIST, NULL, &hinted_me) == PTL_OK);
    CHECK(PtlMEUnlink(hinted_me) == PTL_OK && PtlPTFree(ni, hinted) == PTL_OK);

    /* CTs */
    CHECK(PtlCTAlloc(ni, &ct) == PTL_OK);
    CHECK(PtlCTInc(ct, (ptl_ct_event_t){0, 1}) == PTL_OK);
    CHECK(PtlCTWait(ct, 100, &count) == PTL_OK && count.failure == 1); /* a failure ends the wait */
    CHECK(PtlCTSet(ct, (ptl_ct_event_t){0, 0}) == PTL_OK);
    ptl_size_t test = 1;
    CHECK(PtlCTPoll(&ct, &test, 1, 2, &count, &which) == PTL_CT_NONE_REACHED);
    CHECK(PtlCTPoll(&ct, &test, 0, 2, &count, &which) == PTL_ARG_INVALID);
    CHECK(PtlCTGet(PTL_CT_NONE, &count) == PTL_ARG_INVALID);

    /* MDs and the max_mds limit */
    ptl_md_t desc = {buffer, sizeof buffer, 0, eq, ct};
    CHECK(PtlMDBind(ni, NULL, &md) == PTL_ARG_INVALID);
    desc.options = 1 << 30;
    CHECK(PtlMDBind(ni, &desc, &md) == PTL_ARG_INVALID);
    desc.options = PTL_MD_EVENT_CT_ACK;
    ptl_handle_md_t second, third_md;
    CHECK(PtlMDBind(ni, &desc, &md) == PTL_OK);
    CHECK(PtlMDBind(ni, &desc, &second) == PTL_OK);
    CHECK(PtlMDBind(ni, &desc, &third_md) == PTL_NO_SPACE);
    CHECK(PtlMDRelease(second) == PTL_OK);
    CHECK(PtlMDRelease(second) == PTL_ARG_INVALID);

    /* MEs and the list-length limit */
    ptl_me_t me = {buffer + 128, 128, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 7, 0, 0};
    ptl_handle_me_t extra, extra2;
    CHECK(PtlMEAppend(ni, pt, &me, 5, NULL, &me_h) == PTL_ARG_INVALID); /* no such list */
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &extra) == PTL_OK);
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &extra2) == PTL_LIST_TOO_LONG);
    CHECK(PtlMEUnlink(extra) == PTL_OK);
    CHECK(PtlPTFree(ni, pt) == PTL_PT_IN_USE);
    ptl_le_t le = {buffer, 8, PTL_CT_NONE, PTL_UID_ANY, PTL_LE_OP_PUT};
    CHECK(PtlLEAppend(ni, pt, &le, PTL_PRIORITY_LIST, NULL, &extra) == PTL_ARG_INVALID); /* LE on a matching NI */

    /* Data movement to itself */
    CHECK(PtlPut(md, 0, sizeof buffer + 1, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0) == PTL_ARG_INVALID);
    CHECK(PtlPut(md, 0, 8, 9, self, pt, 7, 0, NULL, 0) == PTL_ARG_INVALID); /* bad ack request */
    CHECK(PtlPut(PTL_INVALID_HANDLE, 0, 8, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0) == PTL_ARG_INVALID);
    CHECK(PtlAtomic(md, 0, 7, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0, PTL_SUM, PTL_INT64_T) == PTL_ARG_INVALID);
    CHECK(PtlAtomic(md, 0, 8, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0, PTL_SWAP, PTL_INT64_T) == PTL_ARG_INVALID);
    CHECK(PtlFetchAtomic(md, 0, md, 8, 128, self, pt, 7, 0, NULL, 0, PTL_SUM, PTL_INT8_T) == PTL_ARG_INVALID);
    CHECK(PtlSwap(md, 0, md, 8, 16, self, pt, 7, 0, NULL, 0, &test, PTL_CSWAP, PTL_INT64_T) == PTL_ARG_INVALID);
    strcpy(buffer, "to myself");
    CHECK(PtlPut(md, 0, 10, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0) == PTL_OK);
    do CHECK(PtlEQWait(eq, &event) == PTL_OK); while (event.type != PTL_EVENT_ACK);
    CHECK(event.ni_fail_type == PTL_NI_OK && strcmp(buffer + 128, "to myself") == 0);
    CHECK(PtlCTGet(ct, &count) == PTL_OK && count.success == 1);
    CHECK(PtlPut(md, 0, 10, PTL_ACK_REQ, self, pt, 99, 0, NULL, 0) == PTL_OK); /* matches nothing */
    do CHECK(PtlEQWait(eq, &event) == PTL_OK); while (event.type != PTL_EVENT_ACK);
    CHECK(event.ni_fail_type == PTL_NI_DROPPED && event.mlength == 0);
    CHECK(PtlCTGet(ct, &count) == PTL_OK && count.failure == 1);
    CHECK(PtlNIStatus(ni, PTL_SR_DROP_COUNT, &status) == PTL_OK && status == 1);
    /* An entry reserved to another user: a permission violation, counted. */
    ptl_me_t foreign = {buffer + 200, 8, PTL_CT_NONE, uid + 1, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE,
                        {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 42, 0, 0};
    ptl_handle_me_t foreign_h;
    CHECK(PtlMEUnlink(me_h) == PTL_OK);
    CHECK(PtlMEAppend(ni, pt, &foreign, PTL_PRIORITY_LIST, NULL, &foreign_h) == PTL_OK);
    CHECK(PtlPut(md, 0, 8, PTL_ACK_REQ, self, pt, 42, 0, NULL, 0) == PTL_OK);
    do CHECK(PtlEQWait(eq, &event) == PTL_OK); while (event.type != PTL_EVENT_ACK);
    CHECK(event.ni_fail_type == PTL_NI_PERM_VIOLATION);
    CHECK(PtlNIStatus(ni, PTL_SR_PERMISSION_VIOLATIONS, &status) == PTL_OK && status == 1);
    CHECK(PtlMEUnlink(foreign_h) == PTL_OK);
    CHECK(PtlMEAppend(ni, pt, &me, PTL_PRIORITY_LIST, NULL, &me_h) == PTL_OK);

    /* A full EQ drops events and says so. */
    ptl_md_t noisy = {buffer, sizeof buffer, 0, small_eq, PTL_CT_NONE};
    ptl_handle_md_t noisy_md;
    CHECK(PtlMDRelease(md) == PTL_OK);
    CHECK(PtlMDBind(ni, &noisy, &noisy_md) == PTL_OK);
    CHECK(PtlPut(noisy_md, 0, 8, PTL_ACK_REQ, self, pt, 7, 0, NULL, 0) == PTL_OK);
    struct timespec away = {0, 100000};
    nanosleep(&away, NULL); /* SEND fills the one-slot queue; the ACK finds it full */
    ptl_event_t got;
    CHECK(PtlEQWait(small_eq, &got) == PTL_EQ_DROPPED && got.type == PTL_EVENT_SEND);
    CHECK(PtlEQPoll(&small_eq, 1, 1, &got, &which) == PTL_EQ_EMPTY);

    CHECK(PtlMEUnlink(me_h) == PTL_OK);
    CHECK(PtlMEUnlink(me_h) == PTL_ARG_INVALID);
    CHECK(PtlPTFree(ni, pt) == PTL_OK);
    CHECK(PtlCTFree(ct) == PTL_OK);
    CHECK(PtlNIFini(ni) == PTL_OK);
    CHECK(PtlNIFini(ni) == PTL_OK); /* the second PtlNIInit's: the NI goes now */
    CHECK(PtlNIFini(ni) == PTL_ARG_INVALID);
    PtlFini();
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
}
