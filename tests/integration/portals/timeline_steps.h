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

#include "../test_checks.h"

static inline long long now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The next event of `eq`; a failed one (but an ACK, which may carry a refusal the
 * program looks at) ends the program. */
static inline ptl_event_t next_event(ptl_handle_eq_t eq)
{
    ptl_event_t event;
    must_succeed(PtlEQWait(eq, &event), "PtlEQWait");
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

/* The start of every rank: PtlInit, a matching physical NI with `pid` and an EQ of 256
 * events. Returns the rank (S4BXI_RANK, 0 if unset). */
static inline int start(ptl_pid_t pid, ptl_handle_ni_t *ni, ptl_handle_eq_t *eq)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, pid, NULL, NULL, ni), "PtlNIInit");
    must_succeed(PtlEQAlloc(*ni, 256, eq), "PtlEQAlloc");
    return rank;
}

/* The target's side of the start: one matching ME over `length` bytes of `buffer` on
 * portal table entry 0 (put and get allowed, LINK events disabled), then the first Put
 * that reaches it (the knock). */
static inline void expose_entry(ptl_handle_ni_t ni, ptl_handle_eq_t eq, void *buffer, ptl_size_t length)
{
    ptl_pt_index_t pt;
    must_succeed(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
    ptl_me_t me = {buffer, length, PTL_CT_NONE, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
    ptl_handle_me_t handle;
    must_succeed(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &handle), "PtlMEAppend");
    next_event(eq); /* the knock */
}

/* The initiator's side: 1-byte Puts from `md` until one is acknowledged without error,
 * that is until the target's entry is there. */
static inline void knock(ptl_handle_md_t md, ptl_handle_eq_t eq, ptl_process_t peer)
{
    for (;;) {
        must_succeed(PtlPut(md, 0, 1, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
        ptl_event_t event;
        do event = next_event(eq); while (event.type != PTL_EVENT_ACK);
        if (event.ni_fail_type == PTL_NI_OK) return;
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
