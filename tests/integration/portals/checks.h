/* The verdict of the self-checking Portals programs: CHECK prints "ok" or "FAIL" with the
 * expression and counts the failures; main returns failures != 0. One program a file, so
 * the counter may live here. */
#ifndef S4BXI_TEST_CHECKS_H
#define S4BXI_TEST_CHECKS_H
#include <stdio.h>

static int failures;
#define CHECK(expr)                                      \
    do {                                                 \
        int ok_ = (expr);                                \
        printf("%s %s\n", ok_ ? "ok  " : "FAIL", #expr); \
        failures += !ok_;                                \
    } while (0)

#endif
