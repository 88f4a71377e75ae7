/* A thread blocked in a Portals wait does not stop the rank's other threads from making
 * Portals calls, and a thread that sleeps in real time meanwhile is not a deadlock (the
 * cases of the reference suite's test_basic_ct-031..040, and SOS's get_wait, which waits
 * for a Get another thread has yet to issue). One rank, one counter; each case:
 *   1. a helper thread waits in PtlCTWait for 10 while another helper sleeps 50 ms of real
 *      time, then increments the counter 10 times;
 *   2. the same with PtlCTPoll and a timeout of 1.3 s: the increments come first;
 *   3. PtlCTPoll for 100 with a timeout of 130 ms: only 10 come, the poll times out, in
 *      real time as the helper thread's clock runs, not at once;
 *   4. PtlEQPoll with a timeout of 1.3 s on an event queue, while a helper sleeps, then
 *      puts to the rank itself (the put's SEND event ends the poll);
 *   5. the simulated thread itself waits in PtlCTWait while a helper, which has made a
 *      Portals call before, sleeps 20 ms of real time and then increments;
 *   6. a helper waits in PtlCTWait while another frees the counter: PTL_INTERRUPTED. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 46
#define PT 0

static ptl_handle_ni_t ni;
static ptl_handle_ct_t ct;
static ptl_handle_eq_t eq;
static ptl_handle_md_t md;
static ptl_process_t self;
static pthread_barrier_t started;

struct waiter {
    int kind;     /* 0 CTWait, 1 CTPoll, 2 EQPoll */
    ptl_size_t test;
    ptl_time_t timeout_ms;
    int rc;
    ptl_ct_event_t count;
    double seconds;  /* real time the wait took, as the thread's clock says */
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    pthread_barrier_wait(&started);
    double start = now();
    unsigned int which = 0;
    if (w->kind == 0) {
        w->rc = PtlCTWait(ct, w->test, &w->count);
    } else if (w->kind == 1) {
        w->rc = PtlCTPoll(&ct, &w->test, 1, w->timeout_ms, &w->count, &which);
    } else {
        ptl_event_t event;
        w->rc = PtlEQPoll(&eq, 1, w->timeout_ms, &event, &which);
        if (w->rc == PTL_OK && event.type != PTL_EVENT_SEND) w->rc = -1000 - (int)event.type;
    }
    w->seconds = now() - start;
    return NULL;
}

static void *increment_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    sleep_ms(50);
    for (int k = 0; k < 10; ++k)
        if (PtlCTInc(ct, (ptl_ct_event_t){1, 0}) != PTL_OK) return (void *)1;
    return NULL;
}

static void *free_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    sleep_ms(50);
    return PtlCTFree(ct) == PTL_OK ? NULL : (void *)1;
}

static void *put_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&started);
    sleep_ms(50);
    if (PtlPut(md, 0, 8, PTL_NO_ACK_REQ, self, PT, 0, 0, NULL, 0) != PTL_OK) return (void *)1;
    return NULL;
}

/* Runs a waiting thread and a helper at once; returns the waiter's result. */
static struct waiter run_case(int kind, ptl_size_t test, ptl_time_t timeout_ms, void *(*helper)(void *))
{
    struct waiter w = {kind, test, timeout_ms, -1, {0, 0}, 0};
    EXPECT_RC(PtlCTSet(ct, (ptl_ct_event_t){0, 0}), PTL_OK);
    pthread_barrier_init(&started, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, wait_thread, &w);
    pthread_create(&b, NULL, helper, NULL);
    void *helper_failed = NULL;
    pthread_join(a, NULL);
    pthread_join(b, &helper_failed);
    pthread_barrier_destroy(&started);
    expect(helper_failed == NULL, "the helper thread's calls succeeded");
    return w;
}

static void *late_increments(void *arg)
{
    (void)arg;
    /* A Portals call first: the server knows this thread may call again. */
    if (PtlCTInc(ct, (ptl_ct_event_t){0, 0}) != PTL_OK) return (void *)1;
    pthread_barrier_wait(&started);
    sleep_ms(20);
    for (int k = 0; k < 10; ++k)
        if (PtlCTInc(ct, (ptl_ct_event_t){1, 0}) != PTL_OK) return (void *)1;
    return NULL;
}

int main(void)
{
    static uint64_t target[1], source[1] = {42};
    open_lone_rank(PID, &ni, &self);
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
    ptl_me_t entry = any_source_entry(target, sizeof target, PTL_CT_NONE, PTL_ME_OP_PUT);
    ptl_handle_me_t me;
    EXPECT_RC(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);
    ptl_md_t description = {source, sizeof source, 0, eq, PTL_CT_NONE};
    EXPECT_RC(PtlMDBind(ni, &description, &md), PTL_OK);

    struct waiter w = run_case(0, 10, 0, increment_thread);
    expect(w.rc == PTL_OK && w.count.success == 10, "1. PtlCTWait in a thread ends when another thread increments");

    w = run_case(1, 10, 1300, increment_thread);
    expect(w.rc == PTL_OK && w.count.success == 10, "2. PtlCTPoll in a thread ends when another thread increments");

    w = run_case(1, 100, 130, increment_thread);
    printf("rank 0: the poll took %.3f s of real time\n", w.seconds);
    expect(w.rc == PTL_CT_NONE_REACHED && w.seconds >= 0.13,
           "3. PtlCTPoll in a thread times out after its timeout of real time");

    w = run_case(2, 0, 1300, put_thread);
    expect(w.rc == PTL_OK, "4. PtlEQPoll in a thread ends with the SEND of another thread's put");

    /* 5: the simulated thread waits. */
    EXPECT_RC(PtlCTSet(ct, (ptl_ct_event_t){0, 0}), PTL_OK);
    pthread_barrier_init(&started, NULL, 2);
    pthread_t helper;
    pthread_create(&helper, NULL, late_increments, NULL);
    pthread_barrier_wait(&started);
    ptl_ct_event_t count;
    EXPECT_RC(PtlCTWait(ct, 10, &count), PTL_OK);
    void *helper_failed = NULL;
    pthread_join(helper, &helper_failed);
    expect(helper_failed == NULL && count.success == 10,
           "5. the simulated thread's PtlCTWait lets another thread increment");

    w = run_case(0, 10, 0, free_thread);
    expect(w.rc == PTL_INTERRUPTED, "6. PtlCTWait in a thread returns PTL_INTERRUPTED when another frees the counter");

    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
