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

#endif
