/* A wait that a thread other than the simulated one starts just as the count it waits for
 * arrives still ends (the pattern of SOS's mt_membar: a thread puts to its own rank, and
 * another waits for the ACKs in shmem_fence's PtlCTWait). Parking such a wait lets the
 * server's other actors run (the next proxy is created, the gate woken); the NIC counted
 * the ACK then, before the parked wait waited, and the wait was never answered: the run
 * ended as a deadlock with the counter at the wait's test (3 runs of 6 before the fix).
 * One rank, puts to itself; the main thread joins its threads (it waits outside the
 * simulation, as SOS's tests do):
 *   1. a thread puts N times, counting the ACKs on a counter, and after each put another
 *      thread waits in PtlCTWait for that many ACKs;
 *   2. one thread puts and waits for the ACK itself, N times. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 47
#define PT 0
#define N 300

static ptl_handle_ni_t ni;
static ptl_handle_ct_t acks;
static ptl_handle_md_t md;
static ptl_process_t self;
static uint64_t issued, waited;  /* atomics: how far the putting and the waiting threads got */
static uint64_t base;            /* ACKs counted before the case began */
static int failed;

static void put_once(void)
{
    if (PtlPut(md, 0, 8, PTL_CT_ACK_REQ, self, PT, 0, 0, NULL, 0) != PTL_OK) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
}

static void wait_for(uint64_t count)
{
    ptl_ct_event_t event;
    int rc = PtlCTWait(acks, base + count, &event);
    if (rc != PTL_OK || event.success < base + count) {
        printf("rank %d: PtlCTWait(acks, %llu) returned %d with %llu successes and %llu failures\n", rank,
               (unsigned long long)(base + count), rc, (unsigned long long)event.success,
               (unsigned long long)event.failure);
        __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
    }
}

/* Case 1: puts, each after the previous one's wait ended (spinning on memory meanwhile). */
static void *putter(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= N && !__atomic_load_n(&failed, __ATOMIC_RELAXED); ++i) {
        put_once();
        __atomic_store_n(&issued, i, __ATOMIC_RELEASE);
        while (__atomic_load_n(&waited, __ATOMIC_ACQUIRE) < i && !__atomic_load_n(&failed, __ATOMIC_RELAXED)) {
        }
    }
    return NULL;
}

static void *waiter(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= N && !__atomic_load_n(&failed, __ATOMIC_RELAXED); ++i) {
        while (__atomic_load_n(&issued, __ATOMIC_ACQUIRE) < i) {
        }
        wait_for(i);
        __atomic_store_n(&waited, i, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* Case 2: one thread puts and waits. */
static void *put_and_wait(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= N && !__atomic_load_n(&failed, __ATOMIC_RELAXED); ++i) {
        put_once();
        wait_for(i);
    }
    return NULL;
}

static uint64_t acks_so_far(void)
{
    ptl_ct_event_t event;
    EXPECT_RC(PtlCTGet(acks, &event), PTL_OK);
    return event.success;
}

int main(void)
{
    static uint64_t target[1], source[1] = {42};
    open_lone_rank(PID, &ni, &self);
    EXPECT_RC(PtlCTAlloc(ni, &acks), PTL_OK);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
    ptl_me_t entry = any_source_entry(target, sizeof target, PTL_CT_NONE, PTL_ME_OP_PUT);
    ptl_handle_me_t me;
    EXPECT_RC(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);
    ptl_md_t description = {source, sizeof source, PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, acks};
    EXPECT_RC(PtlMDBind(ni, &description, &md), PTL_OK);

    pthread_t a, b;
    pthread_create(&a, NULL, putter, NULL);
    pthread_create(&b, NULL, waiter, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    expect(!failed && acks_so_far() == N, "1. a thread's PtlCTWait for each ACK of another thread's put to the rank ends");

    base = acks_so_far();
    pthread_create(&a, NULL, put_and_wait, NULL);
    pthread_join(a, NULL);
    expect(!failed && acks_so_far() == base + N, "2. a thread's PtlCTWait for the ACK of its own put to the rank ends");

    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
