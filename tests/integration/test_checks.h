/* How the C programs of the integration tests judge themselves, one header for all. One
 * program a file, so the counters may live here.
 *   CHECK(expr)               prints "ok" or "FAIL" with the expression and counts the
 *                             failures; main returns failures != 0.
 *   CHECK_THAT(cond, ...)     silent when `cond` holds; otherwise counts a failure and says
 *                             why on stderr (printf arguments).
 *   expect(cond, what), EXPECT_RC(call, rc)
 *                             "rank R ok|FAIL what", rank by rank: the first failure ends
 *                             the rank with status 1. The program sets `rank` once it knows it.
 *   MUST_SUCCEED(call), must_succeed(rc, what)
 *                             a set-up call that must return 0 (PTL_OK): otherwise the program
 *                             ends with status 2 (not 1, its own verdict), naming the call.
 *   host_uptime()             the host's /proc/uptime in seconds (-1 if unknown): what a wait
 *                             cost the host, beside the simulated time it took. */
#ifndef S4BXI_TEST_CHECKS_H
#define S4BXI_TEST_CHECKS_H
#include <stdio.h>
#include <stdlib.h>

extern char *program_invocation_short_name;

static int failures __attribute__((unused));
static int rank __attribute__((unused)) = -1;

#define CHECK(expr)                                      \
    do {                                                 \
        int ok_ = (expr);                                \
        printf("%s %s\n", ok_ ? "ok  " : "FAIL", #expr); \
        failures += !ok_;                                \
    } while (0)

#define CHECK_THAT(cond, ...)                                      \
    do {                                                           \
        if (!(cond)) {                                             \
            fprintf(stderr, "%s: ", program_invocation_short_name); \
            fprintf(stderr, __VA_ARGS__);                          \
            fputc('\n', stderr);                                   \
            ++failures;                                            \
        }                                                          \
    } while (0)

static inline void expect(int condition, const char *what)
{
    printf("rank %d %s %s\n", rank, condition ? "ok" : "FAIL", what);
    fflush(stdout);
    if (!condition) exit(1);
}

#define EXPECT_RC(call, rc) expect((call) == (rc), #call " == " #rc)

static inline void must_succeed(int rc, const char *what)
{
    if (rc != 0) { /* PTL_OK */
        fprintf(stderr, "%s: %s failed: %d\n", program_invocation_short_name, what, rc);
        exit(2);
    }
}

#define MUST_SUCCEED(call) must_succeed((call), #call)

static inline double host_uptime(void)
{
    double up = -1.0;
    FILE *f = fopen("/proc/uptime", "r");
    if (f) {
        if (fscanf(f, "%lf", &up) != 1) up = -1.0;
        fclose(f);
    }
    return up;
}

#ifdef PORTALS4_H
/* Rank 0 alone: Portals up, a matching physical NI with `pid`, and the rank's own id (the
 * target of its puts to itself). */
static inline void open_lone_rank(ptl_pid_t pid, ptl_handle_ni_t *ni, ptl_process_t *self)
{
    rank = 0;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, pid, NULL, NULL, ni), PTL_OK);
    EXPECT_RC(PtlGetPhysId(*ni, self), PTL_OK);
}
#endif

#endif
