/* A thread that ends the process while the simulated thread waits in a Portals call (an
 * error path calling exit from a helper thread): rank 0 waits in PtlEQWait for what never
 * comes, and a helper thread calls exit(3) after 100 ms of real time. Rank 1 computes
 * meanwhile, holding simulated time. The run must report rank 0 finished with status 3,
 * not crashed. */
#define _DEFAULT_SOURCE
#include <portals4.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "expect.h"

static void *exit_later(void *unused)
{
    (void)unused;
    struct timespec delay = {0, 100 * 1000 * 1000};
    nanosleep(&delay, NULL);  /* a thread of its own: real time */
    exit(3);
}

int main(void)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 6, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    if (rank == 0) {
        pthread_t helper;
        pthread_create(&helper, NULL, exit_later, NULL);
        ptl_event_t event;
        PtlEQWait(eq, &event);
        expect(0, "the wait returned, though nothing was sent");
    }
    for (volatile long i = 0; i < 400 * 1000 * 1000L; ++i) {
    }
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
