/* A thread the program has just started is on its way to the call the simulated thread
 * waits for: the main thread starts a thread and at once waits in PtlCTWait for a count
 * that only the new thread's PtlCTInc brings, which it makes after 100 ms of computing
 * (runnable all along), then after 100 ms asleep in nanosleep. Until that first call the
 * server has not heard of the thread; it reported a deadlock at once before. One rank.
 * usage: thread_starts */
#define _GNU_SOURCE
#include <portals4.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "../test_checks.h"

static ptl_handle_ni_t ni;
static ptl_handle_ct_t counter;

static long elapsed_ns(const struct timespec* start, clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (now.tv_sec - start->tv_sec) * 1000000000L + (now.tv_nsec - start->tv_nsec);
}

static void* compute_then_count(void* unused)
{
    (void)unused;
    struct timespec start;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    while (elapsed_ns(&start, CLOCK_THREAD_CPUTIME_ID) < 100000000L) continue;
    must_succeed(PtlCTInc(counter, (ptl_ct_event_t){1, 0}), "PtlCTInc");
    return NULL;
}

static void* sleep_then_count(void* unused)
{
    (void)unused;
    struct timespec delay = {0, 100000000L};
    nanosleep(&delay, NULL);  /* another thread's sleep: real time */
    must_succeed(PtlCTInc(counter, (ptl_ct_event_t){1, 0}), "PtlCTInc");
    return NULL;
}

static int wait_for(void* (*thread_main)(void*), ptl_size_t count)
{
    pthread_t thread;
    pthread_create(&thread, NULL, thread_main, NULL);
    ptl_ct_event_t seen;
    int rc = PtlCTWait(counter, count, &seen);
    pthread_join(thread, NULL);
    return rc == PTL_OK && seen.success == count;
}

int main(void)
{
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, NULL, &ni), "PtlNIInit");
    must_succeed(PtlCTAlloc(ni, &counter), "PtlCTAlloc");
    int computed = wait_for(compute_then_count, 1);
    printf("thread_starts: a new thread's count after computing: %s\n", computed ? "ok" : "FAILED");
    int slept = wait_for(sleep_then_count, 2);
    printf("thread_starts: a new thread's count after sleeping: %s\n", slept ? "ok" : "FAILED");
    PtlNIFini(ni);
    PtlFini();
    return computed && slept ? 0 : 1;
}
