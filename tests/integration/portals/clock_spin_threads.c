/* A busy-wait on the clock under --cpu-model zero while another thread of the rank makes
 * Portals calls all the time (a progress thread polling an empty event queue). The
 * other thread's requests are not the simulated thread's: they must neither restart the
 * busy-wait's count of readings nor keep its readings from counting while they hold the
 * slot. Before, the wait never ended (reported as a deadlock after 10 s of vain polls).
 * A busy-wait of T ends within T + min(T/8, 10 us) + 1 us (docs/time.md). */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "../test_checks.h"

#define WAIT 1e-3

static ptl_handle_eq_t eq;
static volatile int done;
static long polls;

static void *poller(void *unused)
{
    (void)unused;
    ptl_event_t event;
    while (!done) {
        PtlEQGet(eq, &event);
        __atomic_add_fetch(&polls, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    rank = 0;
    ptl_handle_ni_t ni;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 7, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    pthread_t thread;
    expect(pthread_create(&thread, NULL, poller, NULL) == 0, "the polling thread started");
    /* A sleep would be simulated and end at once: spin until the poller is under way. */
    while (__atomic_load_n(&polls, __ATOMIC_RELAXED) < 10) {
    }
    double start = now();
    while (now() - start < WAIT) {
    }
    double waited = now() - start;
    done = 1;
    pthread_join(thread, NULL);
    double bound = WAIT + (WAIT / 8 < 10e-6 ? WAIT / 8 : 10e-6) + 1e-6;
    printf("waited %.9f s (bound %.9f s) while the other thread polled %ld times\n", waited, bound, polls);
    expect(waited >= WAIT && waited <= bound, "the busy-wait ended within its bound");
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
