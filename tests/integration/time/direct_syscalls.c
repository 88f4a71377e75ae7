/* Time syscalls made directly, bypassing libc (as inline syscalls and static helpers do):
 * the seccomp trap must serve them with the same simulated clock as the libc functions.
 *
 * usage: direct_syscalls [--exact] [--per-rank]
 *   --exact     zero CPU model: every difference below is exact.
 *   --per-rank  rank R (S4BXI_RANK) sleeps 2 + R seconds instead of 2, so that ranks
 *               sleep concurrently for different times.
 * Checks: a 2 s syscall nanosleep moves the clock by 2 s; an absolute clock_nanosleep
 * 1 s ahead ends exactly there; gettimeofday and time by syscall agree; the raw and the
 * libc CLOCK_MONOTONIC agree; no real time is spent sleeping. Exit status 0 when all holds.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

static long long slack_ns;

#define NS 1000000000LL

static long long raw_ns(clockid_t clock)
{
    struct timespec ts;
    if (syscall(SYS_clock_gettime, clock, &ts) != 0) {
        perror("direct_syscalls: clock_gettime");
        exit(1);
    }
    return (long long)ts.tv_sec * NS + ts.tv_nsec;
}

static long long libc_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * NS + ts.tv_nsec;
}

static void expect_delta(const char* what, long long got, long long expected)
{
    printf("%s: %lld ns (expected %lld ns)\n", what, got, expected);
    if (got < expected || got > expected + slack_ns) {
        fprintf(stderr, "direct_syscalls: %s moved %lld ns, expected %lld ns (+%lld)\n", what, got, expected, slack_ns);
        ++failures;
    }
}

int main(int argc, char** argv)
{
    int exact = 0, per_rank = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--exact") == 0) exact = 1;
        else if (strcmp(argv[i], "--per-rank") == 0) per_rank = 1;
    }
    slack_ns = exact ? 0 : 100000000LL;
    const char* rank_text = getenv("S4BXI_RANK");
    long long sleep_s = 2 + (per_rank && rank_text ? atoll(rank_text) : 0);

    double up0 = host_uptime();
    long long a = raw_ns(CLOCK_MONOTONIC);
    struct timeval g0, g1;
    syscall(SYS_gettimeofday, &g0, NULL);

    struct timespec req = {(time_t)sleep_s, 0};
    if (syscall(SYS_nanosleep, &req, NULL) != 0) {
        perror("direct_syscalls: nanosleep");
        return 1;
    }
    long long b = raw_ns(CLOCK_MONOTONIC);
    syscall(SYS_gettimeofday, &g1, NULL);
    expect_delta("CLOCK_MONOTONIC across a syscall nanosleep", b - a, sleep_s * NS);
    long long dg = ((long long)(g1.tv_sec - g0.tv_sec) * 1000000LL + (g1.tv_usec - g0.tv_usec)) * 1000LL;
    expect_delta("gettimeofday across a syscall nanosleep", dg, sleep_s * NS);

    /* The libc entry points (interposed) and the syscalls (trapped) show one clock. */
    long long from_libc = libc_ns(CLOCK_MONOTONIC);
    long long from_syscall = raw_ns(CLOCK_MONOTONIC);
    expect_delta("libc CLOCK_MONOTONIC -> syscall CLOCK_MONOTONIC", from_syscall - from_libc, 0);
    long long realtime = raw_ns(CLOCK_REALTIME);
    long long seconds = (long long)syscall(SYS_time, NULL);
    if (seconds != realtime / NS) {
        fprintf(stderr, "direct_syscalls: time() = %lld but CLOCK_REALTIME = %lld ns\n", seconds, realtime);
        ++failures;
    }

    /* Absolute deadline 1 s ahead on CLOCK_MONOTONIC. */
    long long start = raw_ns(CLOCK_MONOTONIC);
    struct timespec deadline = {(time_t)((start + NS) / NS), (long)((start + NS) % NS)};
    long rc = syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
    if (rc != 0) {
        perror("direct_syscalls: clock_nanosleep");
        return 1;
    }
    expect_delta("CLOCK_MONOTONIC across an absolute clock_nanosleep", raw_ns(CLOCK_MONOTONIC) - start, NS);

    /* Bad arguments fail as the kernel fails them. */
    struct timespec bad = {0, 1000000000L};
    if (syscall(SYS_nanosleep, &bad, NULL) != -1) {
        fprintf(stderr, "direct_syscalls: nanosleep with tv_nsec = 1e9 did not fail\n");
        ++failures;
    }

    double up1 = host_uptime();
    printf("host time spent: %.2f s\n", up1 - up0);
    if (up0 >= 0 && up1 - up0 > (double)(sleep_s + 1) / 2) {
        fprintf(stderr, "direct_syscalls: simulated sleeps took %.2f s of host time\n", up1 - up0);
        ++failures;
    }
    return failures ? 1 : 0;
}
