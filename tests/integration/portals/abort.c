/* PtlAbort from another thread interrupts the blocking waits in progress: rank 0 waits in
 * PtlEQWait, then in PtlCTWait, for what never comes, and a helper thread aborts each
 * wait after 100 ms of real time; both return PTL_ABORTED. Then three waits at once (the
 * main thread's PtlEQWait and two threads' PtlCTWait, each on a counter of its own): one
 * PtlAbort interrupts all three. An abort while nothing waits changes nothing. Meanwhile rank 1 holds simulated time by spinning on a flag of its
 * own memory, which rank 0 finally puts (measured CPU model). */
#define _DEFAULT_SOURCE
#include <portals4.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "../test_checks.h"

enum { PT = 4, PID = 6, FLAG_BITS = 1 };

static void *abort_later(void *unused)
{
    (void)unused;
    struct timespec delay = {0, 100 * 1000 * 1000};
    nanosleep(&delay, NULL);  /* a thread of its own: real time */
    PtlAbort();
    return NULL;
}

static int aborted_wait(int (*wait)(void *), void *what)
{
    pthread_t helper;
    pthread_create(&helper, NULL, abort_later, NULL);
    int rc = wait(what);
    pthread_join(helper, NULL);
    return rc;
}

static ptl_handle_eq_t eq;
static ptl_handle_ct_t ct;
static ptl_handle_ct_t thread_cts[2];
static int thread_rcs[2];
static int waiting;  /* threads that have begun their wait, about */

static int eq_wait(void *unused)
{
    (void)unused;
    ptl_event_t event;
    return PtlEQWait(eq, &event);
}

static int ct_wait(void *unused)
{
    (void)unused;
    ptl_ct_event_t value;
    return PtlCTWait(ct, 1, &value);
}

static void *ct_wait_thread(void *index)
{
    ptl_ct_event_t value;
    int i = (int)(long)index;
    __atomic_add_fetch(&waiting, 1, __ATOMIC_SEQ_CST);
    thread_rcs[i] = PtlCTWait(thread_cts[i], 1, &value);
    return NULL;
}

/* The main thread's PtlEQWait and two threads' PtlCTWait, all in progress when the
 * helper aborts (100 ms after the threads began): each returns PTL_ABORTED. */
static int three_waits(void *unused)
{
    (void)unused;
    pthread_t threads[2];
    for (long i = 0; i < 2; ++i) pthread_create(&threads[i], NULL, ct_wait_thread, (void *)i);
    while (__atomic_load_n(&waiting, __ATOMIC_SEQ_CST) < 2) sched_yield();
    int rc = eq_wait(NULL);
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    return rc == PTL_ABORTED && thread_rcs[0] == PTL_ABORTED && thread_rcs[1] == PTL_ABORTED ? PTL_ABORTED : -1;
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static volatile char flag;
    static char one = 1;
    ptl_handle_ni_t ni;
    ptl_pt_index_t pt;
    ptl_handle_md_t md;
    ptl_handle_me_t me;
    ptl_process_t any = {.phys = {PTL_NID_ANY, PTL_PID_ANY}};
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, PT, &pt), PTL_OK);
    if (rank == 1) {
        ptl_me_t flag_desc = {(void *)&flag, 1, PTL_CT_NONE, PTL_UID_ANY,
                              PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE, any, FLAG_BITS, 0, 0};
        EXPECT_RC(PtlMEAppend(ni, PT, &flag_desc, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);
        while (!flag) __sync_synchronize();
    } else {
        ptl_event_t event;
        unsigned int which;
        PtlAbort();
        EXPECT_RC(PtlEQPoll(&eq, 1, 1, &event, &which), PTL_EQ_EMPTY);
        expect(PTL_ABORTED == PTL_INTERRUPTED, "PTL_ABORTED is the reference's PTL_INTERRUPTED");
        expect(aborted_wait(eq_wait, NULL) == PTL_ABORTED, "PtlAbort interrupts PtlEQWait");
        expect(aborted_wait(ct_wait, NULL) == PTL_ABORTED, "PtlAbort interrupts PtlCTWait");
        EXPECT_RC(PtlCTAlloc(ni, &thread_cts[0]), PTL_OK);
        EXPECT_RC(PtlCTAlloc(ni, &thread_cts[1]), PTL_OK);
        expect(aborted_wait(three_waits, NULL) == PTL_ABORTED,
               "one PtlAbort interrupts the three waits in progress (two other threads' PtlCTWait, PtlEQWait)");
        ptl_md_t md_desc = {&one, 1, 0, PTL_EQ_NONE, PTL_CT_NONE};
        EXPECT_RC(PtlMDBind(ni, &md_desc, &md), PTL_OK);
        ptl_process_t peer = {.phys = {1, PID}};
        EXPECT_RC(PtlPut(md, 0, 1, PTL_NO_ACK_REQ, peer, PT, FLAG_BITS, 0, NULL, 0), PTL_OK);
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
