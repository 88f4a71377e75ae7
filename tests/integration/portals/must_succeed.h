/* For programs whose set-up calls must all succeed: a failed Portals call ends the program
 * with status 2 (not 1, its own verdict), naming the call and its return code. */
#ifndef S4BXI_TEST_MUST_SUCCEED_H
#define S4BXI_TEST_MUST_SUCCEED_H
#include <stdio.h>
#include <stdlib.h>

extern char *program_invocation_short_name;

static inline void check(int rc, const char *what)
{
    if (rc != 0) {  /* PTL_OK */
        fprintf(stderr, "%s: %s failed: %d\n", program_invocation_short_name, what, rc);
        exit(2);
    }
}

#endif
