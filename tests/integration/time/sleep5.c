/* Sleeps with sleep(3) and prints how far CLOCK_MONOTONIC and gettimeofday moved.
 *
 * usage: sleep5 [--exact] [SECONDS]       (SECONDS defaults to 5)
 *   --exact   the run uses the zero CPU model: both clocks must move by exactly SECONDS.
 *             Otherwise they must move by SECONDS plus at most a little CPU time.
 * In both cases the sleep must not take real time (read from /proc/uptime, which nothing
 * simulates). Exit status 0 when all holds, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

int main(int argc, char** argv)
{
    int exact = 0;
    unsigned seconds = 5;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--exact") == 0) exact = 1;
        else seconds = (unsigned)strtoul(argv[i], NULL, 10);
    }
    const long long expected_ns = (long long)seconds * 1000000000LL;
    const long long expected_us = (long long)seconds * 1000000LL;
    const long long slack_ns = exact ? 0 : 100000000LL; /* CPU time between the reads */

    double up0 = host_uptime();
    struct timespec m0, m1;
    struct timeval g0, g1;
    clock_gettime(CLOCK_MONOTONIC, &m0);
    gettimeofday(&g0, NULL);
    unsigned left = sleep(seconds);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    gettimeofday(&g1, NULL);
    double up1 = host_uptime();

    long long dm = (long long)(m1.tv_sec - m0.tv_sec) * 1000000000LL + (m1.tv_nsec - m0.tv_nsec);
    long long dg = (long long)(g1.tv_sec - g0.tv_sec) * 1000000LL + (g1.tv_usec - g0.tv_usec);
    printf("sleep(%u) returned %u: CLOCK_MONOTONIC advanced %lld.%09lld s, gettimeofday advanced %lld.%06lld s, "
           "host time %.2f s\n",
           seconds, left, dm / 1000000000LL, dm % 1000000000LL, dg / 1000000LL, dg % 1000000LL, up1 - up0);

    int ok = 1;
    if (left != 0) {
        fprintf(stderr, "sleep5: sleep() returned %u, expected 0\n", left);
        ok = 0;
    }
    if (dm < expected_ns || dm > expected_ns + slack_ns) {
        fprintf(stderr, "sleep5: CLOCK_MONOTONIC moved %lld ns, expected %lld ns (+%lld)\n", dm, expected_ns, slack_ns);
        ok = 0;
    }
    /* gettimeofday truncates to microseconds: exact when the clock moved by whole seconds. */
    if (dg < expected_us || dg > expected_us + slack_ns / 1000 + (exact ? 0 : 1)) {
        fprintf(stderr, "sleep5: gettimeofday moved %lld us, expected %lld us\n", dg, expected_us);
        ok = 0;
    }
    if (seconds >= 2 && up0 >= 0 && up1 - up0 > seconds / 2.0) {
        fprintf(stderr, "sleep5: the simulated sleep took %.2f s of host time\n", up1 - up0);
        ok = 0;
    }
    return ok ? 0 : 1;
}
