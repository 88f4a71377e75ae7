/* A helper a rank runs: built static (no preloaded library can reach it) and making raw
 * time syscalls, which the rank's inherited seccomp filter traps. They must be let
 * through: real time, real sleeps, no SIGSYS. Exit status 0 when so.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
    struct timespec a, b, req = {0, 100000000L};
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &a) != 0) return 2;
    if (syscall(SYS_nanosleep, &req, NULL) != 0) return 3;
    if (syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &req, NULL) != 0) return 4;
    if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &b) != 0) return 5;
    long long elapsed = (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    if (elapsed < 200000000LL) return 6; /* the two 0.1 s sleeps were real */
    struct timeval tv;
    if (syscall(SYS_gettimeofday, &tv, NULL) != 0) return 7;
    if (syscall(SYS_time, NULL) < 1000000000L) return 8; /* the host's calendar, after 2001 */
    return 0;
}
