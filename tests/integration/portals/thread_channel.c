/* The rank's threads share one channel to the server: calls and waits of several threads
 * at once are each served once, in turn, and no number of threads blocked in waits stops
 * the others (SOS's shmem_ctx: OpenMP threads, each putting and waiting on its own
 * context, the main thread among them). One rank, puts to itself:
 *   1. the simulated thread puts and waits in PtlCTWait for each ACK, while 4 threads put,
 *      poll with timeouts (PtlCTPoll, PtlEQPoll), increment a counter the simulated thread
 *      also waits on, and read counters. The simulated thread's wait, parked, ended while
 *      another thread's put was being served: the server served that put a second time,
 *      and its second reply answered the next request ("internal error: reply out of
 *      sequence"), or counted an ACK too many;
 *   2. 12 threads block at once in PtlCTWait, PtlEQWait, PtlCTPoll and PtlEQPoll (with a
 *      timeout of 60 s), more than the server once had room for (8): another thread makes
 *      calls meanwhile, then ends every wait with an increment or a put, and each wait
 *      returns what ended it. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "entries.h"
#include "../test_checks.h"

#define PID 48
#define PT 0
#define WORKERS 4
#define ROUNDS 200
#define WAITERS 12

static ptl_handle_ni_t ni;
static ptl_process_t self;
static uint64_t target[64];
static int failed;

static void fail(const char *what, int rc)
{
    printf("rank 0: %s returned %d\n", what, rc);
    fflush(stdout);
    __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
}

#define CHECK_ON_ANY_THREAD(call)                   \
    do {                                            \
        int rc_ = (call);                           \
        if (rc_ != PTL_OK) fail(#call, rc_);        \
    } while (0)

static ptl_handle_md_t bind(void *start, ptl_size_t length, unsigned int options, ptl_handle_eq_t eq,
                            ptl_handle_ct_t ct)
{
    ptl_md_t description = {start, length, options, eq, ct};
    ptl_handle_md_t md;
    EXPECT_RC(PtlMDBind(ni, &description, &md), PTL_OK);
    return md;
}

static uint64_t count_of(ptl_handle_ct_t ct)
{
    ptl_ct_event_t event;
    CHECK_ON_ANY_THREAD(PtlCTGet(ct, &event));
    return event.success;
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- 1. calls and waits of five threads at once ---- */

static ptl_handle_ct_t pulses;  /* incremented by the workers, waited on by the simulated thread */

struct worker {
    ptl_handle_ct_t acks;
    ptl_handle_eq_t eq;
    ptl_handle_md_t md;
    uint64_t source;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    for (uint64_t i = 1; i <= ROUNDS && !__atomic_load_n(&failed, __ATOMIC_RELAXED); ++i) {
        CHECK_ON_ANY_THREAD(PtlPut(w->md, 0, sizeof w->source, PTL_CT_ACK_REQ, self, PT, 0, 0, NULL, 0));
        ptl_ct_event_t test = {i, 0}, event;
        unsigned int which;
        CHECK_ON_ANY_THREAD(PtlCTPoll(&w->acks, &test.success, 1, 10000, &event, &which));
        if (event.success < i) fail("PtlCTPoll for an ACK: too few", (int)event.success);
        /* The put's SEND event: its queue has one whenever the poll looks. */
        ptl_event_t sent;
        CHECK_ON_ANY_THREAD(PtlEQPoll(&w->eq, 1, 10000, &sent, &which));
        if (sent.type != PTL_EVENT_SEND) fail("PtlEQPoll: not a SEND", (int)sent.type);
        CHECK_ON_ANY_THREAD(PtlCTInc(pulses, (ptl_ct_event_t){1, 0}));
        (void)count_of(pulses);
    }
    return NULL;
}

static void calls_and_waits_of_five_threads(void)
{
    ptl_handle_ct_t main_acks;
    EXPECT_RC(PtlCTAlloc(ni, &main_acks), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &pulses), PTL_OK);
    static uint64_t main_source = 7;
    ptl_handle_md_t main_md = bind(&main_source, sizeof main_source, PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, main_acks);

    struct worker workers[WORKERS];
    pthread_t threads[WORKERS];
    for (int i = 0; i < WORKERS; ++i) {
        struct worker *w = &workers[i];
        w->source = (uint64_t)i;
        EXPECT_RC(PtlCTAlloc(ni, &w->acks), PTL_OK);
        EXPECT_RC(PtlEQAlloc(ni, 2 * ROUNDS + 8, &w->eq), PTL_OK);
        /* ACKs on the counter, SEND events in the queue (PTL_CT_ACK_REQ: no ACK events). */
        w->md = bind(&w->source, sizeof w->source, PTL_MD_EVENT_CT_ACK, w->eq, w->acks);
    }
    for (int i = 0; i < WORKERS; ++i) pthread_create(&threads[i], NULL, work, &workers[i]);
    /* The simulated thread: a put and a wait for its ACK, then a wait for the workers'
     * increments so far, each parked as soon as a worker asks for the channel. */
    for (uint64_t i = 1; i <= ROUNDS && !__atomic_load_n(&failed, __ATOMIC_RELAXED); ++i) {
        CHECK_ON_ANY_THREAD(PtlPut(main_md, 0, sizeof main_source, PTL_CT_ACK_REQ, self, PT, 0, 0, NULL, 0));
        ptl_ct_event_t event;
        CHECK_ON_ANY_THREAD(PtlCTWait(main_acks, i, &event));
        if (event.success < i) fail("PtlCTWait for an ACK: too few", (int)event.success);
        CHECK_ON_ANY_THREAD(PtlCTWait(pulses, i, &event));
    }
    for (int i = 0; i < WORKERS; ++i) pthread_join(threads[i], NULL);
    expect(!failed, "1. every call and wait of five threads at once returned PTL_OK with its count or event");
    int exact = count_of(main_acks) == ROUNDS && count_of(pulses) == WORKERS * ROUNDS;
    for (int i = 0; i < WORKERS; ++i) exact &= count_of(workers[i].acks) == ROUNDS;
    expect(exact, "1. each put and each increment was served once: the counters hold exactly their number");
}

/* ---- 2. more threads blocked at once than the server once had room for ---- */

enum { CT_WAIT, EQ_WAIT, CT_POLL, EQ_POLL };

struct waiter {
    int kind;
    ptl_handle_ct_t ct;  /* CT_WAIT, CT_POLL: incremented by the releaser */
    ptl_handle_eq_t eq;  /* EQ_WAIT, EQ_POLL: the SEND event of the releaser's put */
    ptl_handle_md_t md;  /* EQ_WAIT, EQ_POLL: the releaser's put goes through it */
    uint64_t source;
    int rc;
    uint64_t value;  /* count seen, or the event's user pointer */
};

static int blocked, returned;

static void *block(void *arg)
{
    struct waiter *w = arg;
    ptl_ct_event_t count = {0, 0};
    ptl_event_t event = {0};
    ptl_size_t test = 1;
    unsigned int which;
    __atomic_add_fetch(&blocked, 1, __ATOMIC_ACQ_REL);
    switch (w->kind) {
    case CT_WAIT: w->rc = PtlCTWait(w->ct, test, &count); break;
    case CT_POLL: w->rc = PtlCTPoll(&w->ct, &test, 1, 60000, &count, &which); break;
    case EQ_WAIT: w->rc = PtlEQWait(w->eq, &event); break;
    case EQ_POLL: w->rc = PtlEQPoll(&w->eq, 1, 60000, &event, &which); break;
    }
    w->value = w->kind == CT_WAIT || w->kind == CT_POLL ? count.success : (uint64_t)(uintptr_t)event.user_ptr;
    __atomic_add_fetch(&returned, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

static void *release(void *arg)
{
    struct waiter *waiters = arg;
    while (__atomic_load_n(&blocked, __ATOMIC_ACQUIRE) < WAITERS) sleep_ms(1);
    sleep_ms(200);  /* real time for the last of them to reach the server */
    /* Calls while every waiter is blocked: none of them holds the channel. */
    ptl_handle_ct_t acks;
    EXPECT_RC(PtlCTAlloc(ni, &acks), PTL_OK);
    static uint64_t source = 3;
    ptl_handle_md_t md = bind(&source, sizeof source, PTL_MD_EVENT_CT_ACK, PTL_EQ_NONE, acks);
    for (uint64_t i = 1; i <= 20; ++i) {
        CHECK_ON_ANY_THREAD(PtlPut(md, 0, sizeof source, PTL_CT_ACK_REQ, self, PT, 0, 0, NULL, 0));
        ptl_ct_event_t event;
        CHECK_ON_ANY_THREAD(PtlCTWait(acks, i, &event));
    }
    expect(__atomic_load_n(&returned, __ATOMIC_ACQUIRE) == 0,
           "2. another thread makes calls and waits while 12 threads are blocked in Portals waits");
    for (int i = 0; i < WAITERS; ++i) {
        struct waiter *w = &waiters[i];
        if (w->kind == CT_WAIT || w->kind == CT_POLL)
            CHECK_ON_ANY_THREAD(PtlCTInc(w->ct, (ptl_ct_event_t){1, 0}));
        else
            CHECK_ON_ANY_THREAD(PtlPut(w->md, 0, sizeof w->source, PTL_NO_ACK_REQ, self, PT, 0, 0, (void *)(uintptr_t)(100 + i), 0));
    }
    EXPECT_RC(PtlMDRelease(md), PTL_OK);
    return NULL;
}

static void more_waits_at_once_than_eight(void)
{
    struct waiter waiters[WAITERS];
    pthread_t threads[WAITERS], releaser;
    for (int i = 0; i < WAITERS; ++i) {
        struct waiter *w = &waiters[i];
        w->kind = i % 4;
        w->source = (uint64_t)i;
        w->rc = -1;
        w->value = 0;
        if (w->kind == CT_WAIT || w->kind == CT_POLL) {
            EXPECT_RC(PtlCTAlloc(ni, &w->ct), PTL_OK);
        } else {
            EXPECT_RC(PtlEQAlloc(ni, 4, &w->eq), PTL_OK);
            w->md = bind(&w->source, sizeof w->source, 0, w->eq, PTL_CT_NONE);
        }
    }
    for (int i = 0; i < WAITERS; ++i) pthread_create(&threads[i], NULL, block, &waiters[i]);
    pthread_create(&releaser, NULL, release, waiters);
    pthread_join(releaser, NULL);
    for (int i = 0; i < WAITERS; ++i) pthread_join(threads[i], NULL);
    int all = !failed;
    for (int i = 0; i < WAITERS; ++i) {
        const struct waiter *w = &waiters[i];
        uint64_t expected = w->kind == CT_WAIT || w->kind == CT_POLL ? 1 : (uint64_t)(100 + i);
        if (w->rc != PTL_OK || w->value != expected) {
            printf("rank 0: waiter %d (kind %d) returned %d with %llu, not %llu\n", i, w->kind, w->rc,
                   (unsigned long long)w->value, (unsigned long long)expected);
            all = 0;
        }
    }
    expect(all, "2. each of the 12 waits ended with the increment or the event that was meant for it");
}

/* Both cases, or the one named: "1" or "2". */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : "";
    open_lone_rank(PID, &ni, &self);
    ptl_pt_index_t pt;
    EXPECT_RC(PtlPTAlloc(ni, 0, PTL_EQ_NONE, PT, &pt), PTL_OK);
    ptl_me_t entry = any_source_entry(target, sizeof target, PTL_CT_NONE, PTL_ME_OP_PUT);
    ptl_handle_me_t me;
    EXPECT_RC(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me), PTL_OK);

    if (only[0] != '2') calls_and_waits_of_five_threads();
    if (only[0] != '1') more_waits_at_once_than_eight();

    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
