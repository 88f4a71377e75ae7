/* A rank whose main thread returns while a helper thread still waits in PtlCTWait for a
 * count that never comes: the wait ends with the process, the run ends normally with the
 * program's status (0), with no deadlock report for the wait left behind. */
#define _DEFAULT_SOURCE
#include <portals4.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#include "../test_checks.h"

static ptl_handle_ct_t ct;

static void *wait_forever(void *unused)
{
    (void)unused;
    ptl_ct_event_t count;
    PtlCTWait(ct, 5, &count);
    expect(0, "the wait returned, though nothing counts");
    return NULL;
}

int main(void)
{
    rank = 0;
    ptl_handle_ni_t ni;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 9, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlCTAlloc(ni, &ct), PTL_OK);
    pthread_t helper;
    pthread_create(&helper, NULL, wait_forever, NULL);
    usleep(100000);
    expect(1, "the main thread returns while the helper waits");
    return 0;
}
