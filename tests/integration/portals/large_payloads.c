/* Large payloads arrive intact, whichever way the server moves them: copied once by the
 * receiving rank's delivery thread (contiguous memory, from platform.copy_once_from on), or
 * through the server (an I/O vector; an order that fails, into read-only memory; every
 * payload when copy_once_from is 0).
 *
 * "intact" (the default): rank 1 exposes, on portal table entry 0, a read-only entry
 * (match bits 2), an I/O-vector entry (bits 1) and 8 MiB of plain memory (bits 0), whose
 * upper half holds a pattern; rank 0 knocks, then
 *   - Puts of 300 KiB, 1 MiB + 7 (both ends at odd offsets) and 3 MiB into the lower half;
 *   - a Put of 1.5 MiB into the I/O vector;
 *   - a Put of 512 KiB into the read-only entry: its ACK says PTL_NI_SEGV, the memory is
 *     unchanged;
 *   - a Get of 3 MiB + 5 of the upper half;
 *   - a last 8-byte Put that lets rank 1 go.
 * Each rank checks what it received byte by byte; the exit status counts the failures.
 *
 * "target_dies": rank 1 exposes 64 MiB; a thread of its own kills the process (SIGKILL)
 * as soon as the first byte of a 64 MiB Put lands, that is in the middle of the copy. The
 * run must end with a clear error, not hang (check_large_payloads.py). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../test_checks.h"
#include "timeline_steps.h"

#define PID 23
#define MIB (1 << 20)
#define PLAIN (8 * MIB)
#define UPPER (4 * MIB)
#define READ_ONLY MIB
#define DYING (64 * MIB)

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

static unsigned char pattern(uint64_t i, unsigned seed)
{
    return (unsigned char)((i * 2654435761u + seed) >> 7);
}

static void fill(unsigned char *bytes, uint64_t length, uint64_t first, unsigned seed)
{
    for (uint64_t i = 0; i < length; ++i) bytes[i] = pattern(first + i, seed);
}

static int same(const unsigned char *bytes, uint64_t length, uint64_t first, unsigned seed)
{
    for (uint64_t i = 0; i < length; ++i)
        if (bytes[i] != pattern(first + i, seed)) {
            fprintf(stderr, "large_payloads: byte %llu of %llu differs\n", (unsigned long long)i,
                    (unsigned long long)length);
            return 0;
        }
    return 1;
}

static void append(void *start, ptl_size_t length, unsigned options, ptl_match_bits_t bits)
{
    ptl_me_t me = {start, length, PTL_CT_NONE, PTL_UID_ANY,
                   PTL_ME_OP_PUT | PTL_ME_OP_GET | PTL_ME_EVENT_LINK_DISABLE | options,
                   {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, bits, 0, 0};
    ptl_handle_me_t handle;
    must_succeed(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &handle), "PtlMEAppend");
}

static ptl_event_t any_event(void)
{
    ptl_event_t event;
    must_succeed(PtlEQWait(eq, &event), "PtlEQWait");
    return event;
}

/* The Puts of rank 0 into the plain entry: [local offset, remote offset, length]. */
static const uint64_t large_puts[][3] = {{0, 0, 300 * 1024}, {13, 4099, MIB + 7}, {5 * MIB, 8 * 1024, 3 * MIB}};
#define VECTOR_BYTES (3 * MIB / 2)
#define GET_BYTES (3 * MIB + 5)

/* Watches the byte where the large Put lands first (the knock lands before it). */
#define DYING_OFFSET 64
static void *kill_on_arrival(void *buffer)
{
    volatile unsigned char *first = (unsigned char *)buffer + DYING_OFFSET;
    while (*first == 0) {
    }
    kill(getpid(), SIGKILL);
    return NULL;
}

static _Noreturn void target_dies(int rank, ptl_process_t peer)
{
    unsigned char *buffer = calloc(DYING, 1);
    if (rank == 1) {
        pthread_t thread;
        pthread_create(&thread, NULL, kill_on_arrival, buffer);
        ptl_pt_index_t pt;
        must_succeed(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
        append(buffer, DYING, 0, 0);
        for (;;) any_event();
    }
    memset(buffer, 0xab, DYING);
    ptl_md_t plain = {buffer, DYING, 0, eq, PTL_CT_NONE};
    ptl_handle_md_t md;
    must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
    knock(md, eq, peer);
    must_succeed(PtlPut(md, 0, DYING - DYING_OFFSET, PTL_ACK_REQ, peer, 0, 0, DYING_OFFSET, NULL, 0), "PtlPut");
    for (;;) any_event(); /* the run ends when rank 1 dies */
}

int main(int argc, char **argv)
{
    int rank = start(PID, &ni, &eq);
    ptl_process_t peer = {.phys = {.nid = (ptl_nid_t)(rank ^ 1), .pid = PID}};
    if (argc > 1 && strcmp(argv[1], "target_dies") == 0) target_dies(rank, peer);

    unsigned char *buffer = calloc(PLAIN, 1);
    if (rank == 1) {
        fill(buffer + UPPER, PLAIN - UPPER, UPPER, 1);
        unsigned char *read_only = mmap(NULL, READ_ONLY, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        unsigned char *pieces = calloc(VECTOR_BYTES + 64, 1);
        /* Three pieces, not adjacent: no one contiguous copy could fill them. */
        ptl_iovec_t vector[3] = {{pieces + 32, MIB / 2},
                                 {pieces + MIB / 2 + 48, MIB / 4},
                                 {pieces + 3 * MIB / 4 + 64, VECTOR_BYTES - 3 * MIB / 4}};
        ptl_pt_index_t pt;
        must_succeed(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
        append(read_only, READ_ONLY, 0, 2);
        append(vector, 3, PTL_IOVEC, 1);
        append(buffer, PLAIN, 0, 0);
        next_event(eq); /* the knock */
        for (size_t p = 0; p < sizeof large_puts / sizeof *large_puts; ++p) {
            ptl_event_t event = next_event(eq);
            CHECK(event.type == PTL_EVENT_PUT && event.mlength == large_puts[p][2]);
            CHECK(same(buffer + large_puts[p][1], large_puts[p][2], large_puts[p][0], 0));
        }
        ptl_event_t event = next_event(eq);
        CHECK(event.type == PTL_EVENT_PUT && event.mlength == VECTOR_BYTES);
        CHECK(same(vector[0].iov_base, vector[0].iov_len, 0, 0) &&
              same(vector[1].iov_base, vector[1].iov_len, vector[0].iov_len, 0) &&
              same(vector[2].iov_base, vector[2].iov_len, vector[0].iov_len + vector[1].iov_len, 0));
        event = any_event();
        CHECK(event.type == PTL_EVENT_PUT && read_only[0] == 0 && read_only[READ_ONLY - 1] == 0);
        event = next_event(eq);
        CHECK(event.type == PTL_EVENT_GET && event.mlength == GET_BYTES);
        event = next_event(eq);
        CHECK(event.type == PTL_EVENT_PUT && event.mlength == 8);
    } else {
        fill(buffer, PLAIN, 0, 0);
        ptl_md_t plain = {buffer, PLAIN, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
        knock(md, eq, peer);
        for (size_t p = 0; p < sizeof large_puts / sizeof *large_puts; ++p) {
            must_succeed(PtlPut(md, large_puts[p][0], large_puts[p][2], PTL_ACK_REQ, peer, 0, 0, large_puts[p][1], NULL, 0), "PtlPut");
            ptl_event_t event;
            do event = next_event(eq); while (event.type != PTL_EVENT_ACK);
            CHECK(event.ni_fail_type == PTL_NI_OK && event.mlength == large_puts[p][2]);
        }
        must_succeed(PtlPut(md, 0, VECTOR_BYTES, PTL_ACK_REQ, peer, 0, 1, 0, NULL, 0), "PtlPut");
        ptl_event_t event;
        do event = next_event(eq); while (event.type != PTL_EVENT_ACK);
        must_succeed(PtlPut(md, 0, MIB / 2, PTL_ACK_REQ, peer, 0, 2, 0, NULL, 0), "PtlPut");
        do event = any_event(); while (event.type != PTL_EVENT_ACK);
        CHECK(event.ni_fail_type == PTL_NI_SEGV);
        must_succeed(PtlGet(md, 2 * MIB + 1, GET_BYTES, peer, 0, 0, UPPER + 3, NULL), "PtlGet");
        do event = next_event(eq); while (event.type != PTL_EVENT_REPLY);
        CHECK(event.mlength == GET_BYTES);
        CHECK(same(buffer + 2 * MIB + 1, GET_BYTES, UPPER + 3, 1));
        must_succeed(PtlPut(md, 0, 8, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
        do event = next_event(eq); while (event.type != PTL_EVENT_ACK);
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    return failures != 0;
}
