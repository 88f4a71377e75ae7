/* Counting events of operations the target refuses. Rank 0 puts (PTL_CT_ACK_REQ) and gets
 * (PTL_MD_EVENT_CT_REPLY) to rank 1, counting by events and by bytes
 * (PTL_MD_EVENT_CT_BYTES), along one path of the target's:
 *
 *   no-ni                 rank 1 has no NI yet
 *   pt-not-allocated      its NI has no PT at the index
 *   no-match              the PT's entry wants other match bits
 *   pt-disabled           the PT is disabled (PtlPTDisable)
 *   permission-violation  the entry is reserved to another user
 *   operation-violation   the entry allows neither Put nor Get
 *   delivered             the entry takes both (the control: success counted)
 *
 * A refused operation moves only `failure`, by one, whatever the MD counts (the
 * specification's counting events; the reference implementation's make_ct_event):
 * success stays 0. A triggered operation waiting on that counter fires on the failure,
 * the trigger comparing success plus failure with its threshold. The path "triggered"
 * checks that rule with PtlCTInc alone on rank 0; "all" runs every path in turn.
 * Run on 2 ranks; the exit status is the verdict. */
#include <pmi.h>
#include <portals4.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test_checks.h"

#define PID 9
#define PT 4
#define BITS 0x5
#define LENGTH 8

enum path { NO_NI, PT_NOT_ALLOCATED, NO_MATCH, PT_DISABLED, PERMISSION, OPERATION, DELIVERED, TRIGGERED, PATHS };
static const char *const names[PATHS] = {"no-ni",     "pt-not-allocated", "no-match",  "pt-disabled",
                                         "permission-violation", "operation-violation", "delivered", "triggered"};

static char what[256];
static const char *say(const char *path, const char *text)
{
    snprintf(what, sizeof what, "%s: %s", path, text);
    return what;
}

static void barrier(void)
{
    if (PMI_Barrier() != PMI_SUCCESS) expect(0, "PMI_Barrier");
}

/* Rank 1: the target of `path`, or no NI at all (no-ni). */
static int open_target(enum path path, ptl_handle_ni_t *ni)
{
    static unsigned char exposed[64];
    if (path == NO_NI || path == TRIGGERED) return 0;
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, ni), PTL_OK);
    if (path == PT_NOT_ALLOCATED) return 1;
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(*ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
    ptl_me_t me = {exposed, sizeof exposed, PTL_CT_NONE, PTL_UID_ANY,
                   PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, BITS, 0, 0};
    if (path == NO_MATCH) me.match_bits = BITS + 1;
    if (path == PERMISSION) me.uid = getuid() + 1;
    if (path == OPERATION) me.options = PTL_ME_EVENT_LINK_DISABLE;
    ptl_handle_me_t handle;
    EXPECT_RC(PtlMEAppend(*ni, PT, &me, PTL_PRIORITY_LIST, NULL, &handle), PTL_OK);
    if (path == PT_DISABLED) EXPECT_RC(PtlPTDisable(*ni, PT), PTL_OK);
    return 1;
}

/* Rank 0: one Put and one Get along the path, counted by events then by bytes. */
static void initiate(enum path path, ptl_handle_ni_t ni)
{
    static unsigned char buffer[LENGTH] = "refused";
    const char *name = names[path];
    ptl_process_t target = {.phys = {1, PID}};
    int delivered = path == DELIVERED;
    for (int bytes = 0; bytes < 2; ++bytes) {
        ptl_handle_ct_t ct, fired;
        EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
        EXPECT_RC(PtlCTAlloc(ni, &fired), PTL_OK);
        unsigned int options = PTL_MD_EVENT_CT_ACK | PTL_MD_EVENT_CT_REPLY | (bytes ? PTL_MD_EVENT_CT_BYTES : 0);
        ptl_md_t desc = {buffer, sizeof buffer, options, PTL_EQ_NONE, ct};
        ptl_handle_md_t md;
        EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
        const ptl_size_t success = delivered ? (bytes ? LENGTH : 1) : 0, failure = delivered ? 0 : 1;
        ptl_ct_event_t count;

        /* A trigger on the count of the first operation, whichever way it ends. */
        EXPECT_RC(PtlTriggeredCTInc(fired, (ptl_ct_event_t){1, 0}, ct, 1), PTL_OK);
        EXPECT_RC(PtlPut(md, 0, LENGTH, PTL_CT_ACK_REQ, target, PT, BITS, 0, NULL, 0), PTL_OK);
        EXPECT_RC(PtlCTWait(ct, 1, &count), PTL_OK);
        expect(count.success == success && count.failure == failure,
               say(name, bytes ? "the Put's ACK counted (bytes): success 0 and failure 1 when refused"
                               : "the Put's ACK counted (events): success 0 and failure 1 when refused"));
        EXPECT_RC(PtlCTWait(fired, 1, &count), PTL_OK);
        expect(count.success == 1 && count.failure == 0, say(name, "the count of the Put fired its trigger"));

        EXPECT_RC(PtlCTSet(ct, (ptl_ct_event_t){0, 0}), PTL_OK);
        EXPECT_RC(PtlGet(md, 0, LENGTH, target, PT, BITS, 0, NULL), PTL_OK);
        EXPECT_RC(PtlCTWait(ct, 1, &count), PTL_OK);
        expect(count.success == success && count.failure == failure,
               say(name, bytes ? "the Get's REPLY counted (bytes): success 0 and failure 1 when refused"
                               : "the Get's REPLY counted (events): success 0 and failure 1 when refused"));
        EXPECT_RC(PtlMDRelease(md), PTL_OK);
        EXPECT_RC(PtlCTFree(ct), PTL_OK);
        EXPECT_RC(PtlCTFree(fired), PTL_OK);
    }
}

/* Rank 0 alone: a trigger fires when success plus failure reaches its threshold. */
static void triggered(ptl_handle_ni_t ni)
{
    const char *name = names[TRIGGERED];
    ptl_handle_ct_t ct, fired;
    ptl_ct_event_t count;
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &fired), PTL_OK);
    EXPECT_RC(PtlTriggeredCTInc(fired, (ptl_ct_event_t){1, 0}, ct, 1), PTL_OK);
    EXPECT_RC(PtlTriggeredCTInc(fired, (ptl_ct_event_t){10, 0}, ct, 3), PTL_OK);
    EXPECT_RC(PtlCTInc(ct, (ptl_ct_event_t){0, 1}), PTL_OK);
    EXPECT_RC(PtlCTGet(fired, &count), PTL_OK);
    expect(count.success == 1, say(name, "a failure alone reaches threshold 1"));
    EXPECT_RC(PtlCTInc(ct, (ptl_ct_event_t){1, 0}), PTL_OK);
    EXPECT_RC(PtlCTGet(fired, &count), PTL_OK);
    expect(count.success == 1, say(name, "one failure and one success do not reach threshold 3"));
    EXPECT_RC(PtlCTInc(ct, (ptl_ct_event_t){0, 1}), PTL_OK);
    EXPECT_RC(PtlCTGet(fired, &count), PTL_OK);
    expect(count.success == 11, say(name, "two failures and one success reach threshold 3"));
    /* Registered once the threshold is passed: fires at once. */
    EXPECT_RC(PtlTriggeredCTInc(fired, (ptl_ct_event_t){100, 0}, ct, 2), PTL_OK);
    EXPECT_RC(PtlCTGet(fired, &count), PTL_OK);
    expect(count.success == 111, say(name, "a trigger registered past its threshold fires at once"));
    EXPECT_RC(PtlCTFree(ct), PTL_OK);
    EXPECT_RC(PtlCTFree(fired), PTL_OK);
}

int main(int argc, char **argv)
{
    int spawned, first = -1;
    for (int p = 0; p < PATHS; ++p)
        if (argc == 2 && strcmp(argv[1], names[p]) == 0) first = p;
    int all = argc == 2 && strcmp(argv[1], "all") == 0;
    if (first < 0 && !all) {
        fprintf(stderr, "usage: failed_counts PATH (a path of the comment at the top, or all)\n");
        return 2;
    }
    EXPECT_RC(PMI_Init(&spawned), PMI_SUCCESS);
    EXPECT_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    EXPECT_RC(PtlInit(), PTL_OK);
    ptl_handle_ni_t ni;
    if (rank == 0)
        EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    for (int p = all ? 0 : first; p <= (all ? PATHS - 1 : first); ++p) {
        ptl_handle_ni_t target_ni;
        int opened = rank == 1 && open_target((enum path)p, &target_ni);
        barrier();  /* the target is as the path says */
        if (rank == 0) {
            if (p == TRIGGERED) triggered(ni);
            else initiate((enum path)p, ni);
        }
        barrier();  /* every operation is over */
        if (opened) EXPECT_RC(PtlNIFini(target_ni), PTL_OK);
    }
    if (rank == 0) EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    EXPECT_RC(PMI_Finalize(), PMI_SUCCESS);
    return 0;
}
