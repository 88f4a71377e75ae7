/* The verdict of the Portals programs that check themselves rank by rank: each check
 * prints "rank R ok|FAIL what", and the first failure ends the rank with status 1. The
 * program sets `rank` once it knows it. One program a file, so `rank` may live here. */
#ifndef S4BXI_TEST_EXPECT_H
#define S4BXI_TEST_EXPECT_H
#include <stdio.h>
#include <stdlib.h>

static int rank = -1;

static inline void expect(int condition, const char *what)
{
    printf("rank %d %s %s\n", rank, condition ? "ok" : "FAIL", what);
    fflush(stdout);
    if (!condition) exit(1);
}

#define EXPECT_RC(call, rc) expect((call) == (rc), #call " == " #rc)

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
