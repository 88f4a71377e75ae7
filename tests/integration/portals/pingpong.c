/* Portals 4 put ping-pong between two ranks, for sizes 8 B to 1 MiB.
 *
 * Uses only the Portals 4 API and the standard C library: the peer is the other node
 * (NID xor 1), both processes ask for Portals PID 42. Each received message is checked
 * byte by byte. Prints the one-way latency measured with clock_gettime (virtual time
 * under s4bxi) as "pingpong size=<bytes> iterations=<n> one_way_ns=<value>". With the
 * argument "poll" (or "eqpoll") it busy-polls PtlEQGet (PtlEQPoll with timeout 0) instead of
 * blocking in PtlEQWait. */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "entries.h"

#include "../test_checks.h"

#define MAX_SIZE (1 << 20)
#define PID 42
#define PT 0
#define ITERATIONS 10

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;
static ptl_handle_md_t md;
static unsigned char *send_buffer, *recv_buffer;
static ptl_process_t peer;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* How to wait for events: blocking (PtlEQWait) or busy polling, as MPI libraries do. */
static enum { WAIT, POLL_GET, POLL_EQPOLL } waiting = WAIT;

static void next_event(ptl_event_t *event)
{
    unsigned int which;
    int rc;
    switch (waiting) {
    case WAIT: MUST_SUCCEED(PtlEQWait(eq, event)); return;
    case POLL_GET:
        while ((rc = PtlEQGet(eq, event)) == PTL_EQ_EMPTY) {}
        MUST_SUCCEED(rc);
        return;
    case POLL_EQPOLL:
        while ((rc = PtlEQPoll(&eq, 1, 0, event, &which)) == PTL_EQ_EMPTY) {}
        MUST_SUCCEED(rc);
        return;
    }
}

static ptl_event_t wait_for(ptl_event_kind_t kind)
{
    ptl_event_t event;
    for (;;) {
        next_event(&event);
        if (event.type == kind) return event;
        if (event.type != PTL_EVENT_LINK && event.type != PTL_EVENT_SEND) {
            fprintf(stderr, "pingpong: unexpected event %d\n", event.type);
            exit(3);
        }
    }
}

static unsigned char pattern(size_t i, size_t size, int iteration)
{
    return (unsigned char)(i * 7 + size + (size_t)iteration * 13);
}

static void check_received(size_t size, int iteration)
{
    for (size_t i = 0; i < size; ++i)
        if (recv_buffer[i] != pattern(i, size, iteration)) {
            fprintf(stderr, "pingpong: wrong byte %zu of %zu (iteration %d): %u, expected %u\n", i, size, iteration,
                    recv_buffer[i], pattern(i, size, iteration));
            exit(4);
        }
}

static void put(size_t size, ptl_ack_req_t ack)
{
    MUST_SUCCEED(PtlPut(md, 0, size, ack, peer, PT, 0, 0, NULL, 0));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "poll") == 0) waiting = POLL_GET;
    if (argc > 1 && strcmp(argv[1], "eqpoll") == 0) waiting = POLL_EQPOLL;
    const char *rank_text = getenv("S4BXI_RANK");
    int rank = rank_text ? atoi(rank_text) : 0;
    send_buffer = malloc(MAX_SIZE);
    recv_buffer = malloc(MAX_SIZE);

    MUST_SUCCEED(PtlInit());
    MUST_SUCCEED(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni));
    ptl_process_t me;
    MUST_SUCCEED(PtlGetPhysId(ni, &me));
    peer.phys.nid = me.phys.nid ^ 1;
    peer.phys.pid = PID;
    MUST_SUCCEED(PtlEQAlloc(ni, 64, &eq));
    ptl_pt_index_t pt;
    MUST_SUCCEED(PtlPTAlloc(ni, 0, eq, PT, &pt));
    ptl_me_t entry = any_source_entry(recv_buffer, MAX_SIZE, PTL_CT_NONE, PTL_ME_OP_PUT);
    ptl_handle_me_t me_handle;
    MUST_SUCCEED(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me_handle));
    wait_for(PTL_EVENT_LINK);
    ptl_md_t descriptor = {send_buffer, MAX_SIZE, 0, eq, PTL_CT_NONE};
    MUST_SUCCEED(PtlMDBind(ni, &descriptor, &md));

    /* Handshake: rank 0 knocks until rank 1's entry is there (an unmatched put is
     * acknowledged with PTL_NI_DROPPED); rank 1 answers once. */
    if (rank == 0) {
        for (;;) {
            put(1, PTL_ACK_REQ);
            ptl_event_t ack = wait_for(PTL_EVENT_ACK);
            if (ack.ni_fail_type == PTL_NI_OK) break;
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
        wait_for(PTL_EVENT_PUT);
    } else {
        wait_for(PTL_EVENT_PUT);
        put(1, PTL_NO_ACK_REQ);
    }

    /* From here on the MD has no EQ: no SEND event to drain, only PUT events. */
    MUST_SUCCEED(PtlMDRelease(md));
    descriptor.eq_handle = PTL_EQ_NONE;
    MUST_SUCCEED(PtlMDBind(ni, &descriptor, &md));

    for (size_t size = 8; size <= MAX_SIZE; size *= 2) {
        double start = now_ns();
        for (int iteration = 0; iteration < ITERATIONS; ++iteration) {
            if (rank == 0) {
                for (size_t i = 0; i < size; ++i) send_buffer[i] = pattern(i, size, iteration);
                put(size, PTL_NO_ACK_REQ);
                ptl_event_t event = wait_for(PTL_EVENT_PUT);
                if (event.mlength != size) {
                    fprintf(stderr, "pingpong: mlength %llu, expected %zu\n", (unsigned long long)event.mlength, size);
                    return 5;
                }
                check_received(size, iteration);
            } else {
                ptl_event_t event = wait_for(PTL_EVENT_PUT);
                if (event.mlength != size) return 5;
                check_received(size, iteration);
                memcpy(send_buffer, recv_buffer, size);
                put(size, PTL_NO_ACK_REQ);
            }
        }
        double one_way = (now_ns() - start) / (2.0 * ITERATIONS);
        if (rank == 0) printf("pingpong size=%zu iterations=%d one_way_ns=%.3f\n", size, ITERATIONS, one_way);
    }
    MUST_SUCCEED(PtlMDRelease(md));
    MUST_SUCCEED(PtlMEUnlink(me_handle));
    MUST_SUCCEED(PtlPTFree(ni, pt));
    MUST_SUCCEED(PtlEQFree(eq));
    MUST_SUCCEED(PtlNIFini(ni));
    PtlFini();
    free(send_buffer);
    free(recv_buffer);
    return 0;
}
