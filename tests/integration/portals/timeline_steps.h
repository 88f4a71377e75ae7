/* What the timeline programs share (timeline.c here, tests/reference/compare_*.c): the
 * simulated date, one "case=... step=... t=..." line per step, event names, case
 * selection from the command line. Dates are absolute virtual times in ns; only
 * differences between the dates of one case are meaningful. */
#ifndef S4BXI_TESTS_TIMELINE_STEPS_H
#define S4BXI_TESTS_TIMELINE_STEPS_H

#include <errno.h>
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline long long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void check(int rc, const char *what)
{
    if (rc != PTL_OK) {
        fprintf(stderr, "%s: %s failed: %d\n", program_invocation_short_name, what, rc);
        exit(2);
    }
}

/* The next event of `eq`; a failed one (but an ACK, which may carry a refusal the
 * program looks at) ends the program. */
static inline ptl_event_t next_event(ptl_handle_eq_t eq)
{
    ptl_event_t event;
    check(PtlEQWait(eq, &event), "PtlEQWait");
    if (event.ni_fail_type != PTL_NI_OK && event.type != PTL_EVENT_ACK) {
        fprintf(stderr, "%s: event %d failed: %d\n", program_invocation_short_name, event.type, event.ni_fail_type);
        exit(3);
    }
    return event;
}

static inline void step(const char *name, const char *what, long long t)
{
    printf("case=%s step=%s t=%lld\n", name, what, t);
    fflush(stdout);
}

static inline const char *event_name(ptl_event_kind_t kind)
{
    switch (kind) {
    case PTL_EVENT_SEND: return "SEND";
    case PTL_EVENT_ACK: return "ACK";
    case PTL_EVENT_REPLY: return "REPLY";
    case PTL_EVENT_PUT: return "PUT";
    case PTL_EVENT_GET: return "GET";
    case PTL_EVENT_ATOMIC: return "ATOMIC";
    case PTL_EVENT_FETCH_ATOMIC: return "FETCH_ATOMIC";
    default: return "OTHER";
    }
}

/* With arguments, only the cases they name run. */
static inline int selected(int argc, char **argv, const char *name)
{
    if (argc < 2) return 1;
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], name) == 0) return 1;
    return 0;
}

#endif
