/* Small payloads are taken at the call: a Put, Atomic, FetchAtomic or Swap of up to 64
 * bytes delivers the bytes its MD held when the call was made, even when the program
 * writes over them right after (docs/model.md "How payloads move"); larger payloads, zero
 * bytes and I/O vectors arrive intact as before. Rank 0 issues each case, then overwrites
 * its source at once and waits for the case's events; rank 1 exposes one matching ME and,
 * once every case has landed, checks its memory. Under --cpu-model zero the Puts are
 * posted (the server serves them after the overwrite, before the rank's next call); under
 * the measured model they wait for the server. Exit status 0 when every check passed. */
#define _GNU_SOURCE
#include <stdint.h>

#include "timeline_steps.h"

#define PID 12
#define TARGET_BYTES 8192
#define AREA 4096 /* the cases land from here on, 128 bytes apart */

enum kind { PUT, PUT_IOVEC, ATOMIC_SUM, FETCH_SUM, SWAP };
struct test_case {
    const char *name;
    enum kind kind;
    size_t length;
};
static const struct test_case cases[] = {
    {"put1", PUT, 1},          {"put8", PUT, 8},           {"put63", PUT, 63},
    {"put64", PUT, 64},        {"put65", PUT, 65},         {"put0", PUT, 0},
    {"iovec48", PUT_IOVEC, 48}, {"atomic8", ATOMIC_SUM, 8}, {"fetch8", FETCH_SUM, 8},
    {"swap8", SWAP, 8},
};
#define CASES (sizeof cases / sizeof *cases)


static unsigned char pattern(size_t c, size_t i)
{
    return (unsigned char)(c * 31 + i * 7 + 1);
}

/* The operand of case c's atomics: an int64 that the target's initial value makes easy to check. */
static int64_t operand_of(size_t c)
{
    return 1000 + (int64_t)c;
}
static int64_t initial_of(size_t c)
{
    return 5000000 + (int64_t)c;
}

static void target(ptl_handle_ni_t ni, ptl_handle_eq_t eq)
{
    unsigned char *memory = calloc(TARGET_BYTES, 1);
    for (size_t c = 0; c < CASES; ++c) {
        if (cases[c].kind == ATOMIC_SUM || cases[c].kind == FETCH_SUM || cases[c].kind == SWAP) {
            int64_t initial = initial_of(c);
            memcpy(memory + AREA + c * 128, &initial, sizeof initial);
        }
    }
    expose_entry(ni, eq, memory, TARGET_BYTES);
    for (size_t c = 0; c < CASES; ++c) next_event(eq);
    for (size_t c = 0; c < CASES; ++c) {
        const struct test_case *t = &cases[c];
        const unsigned char *at = memory + AREA + c * 128;
        int64_t value;
        memcpy(&value, at, sizeof value);
        switch (t->kind) {
        case PUT:
        case PUT_IOVEC: {
            int intact = 1;
            for (size_t i = 0; i < t->length; ++i) intact &= at[i] == pattern(c, i);
            CHECK_THAT(intact, "%s: the bytes landed are not those of the call", t->name);
            CHECK_THAT(at[t->length] == 0, "%s: a byte past the payload was written", t->name);
            break;
        }
        case ATOMIC_SUM:
        case FETCH_SUM: CHECK_THAT(value == initial_of(c) + operand_of(c), "%s: the sum is not the call's operand's", t->name); break;
        case SWAP: CHECK_THAT(value == operand_of(c), "%s: the swapped-in value is not the call's", t->name); break;
        }
    }
    free(memory);
}

static void initiator(ptl_handle_ni_t ni, ptl_handle_eq_t eq)
{
    ptl_process_t peer = {.phys = {.nid = 1, .pid = PID}};
    unsigned char source[256], fetched[16];
    ptl_md_t plain = {source, sizeof source, 0, eq, PTL_CT_NONE};
    ptl_handle_md_t md, fetch_md, vector_md;
    must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
    ptl_md_t into = {fetched, sizeof fetched, 0, eq, PTL_CT_NONE};
    must_succeed(PtlMDBind(ni, &into, &fetch_md), "PtlMDBind (fetch)");
    /* Two pieces of 24 bytes: the I/O vector's payload is no contiguous region. */
    ptl_iovec_t pieces[2] = {{source + 128, 24}, {source + 192, 24}};
    ptl_md_t vector = {pieces, 2, PTL_IOVEC, eq, PTL_CT_NONE};
    must_succeed(PtlMDBind(ni, &vector, &vector_md), "PtlMDBind (iovec)");
    memset(source, 0, sizeof source);
    knock(md, eq, peer);

    for (size_t c = 0; c < CASES; ++c) {
        const struct test_case *t = &cases[c];
        ptl_size_t remote = AREA + c * 128;
        int64_t operand = operand_of(c);
        switch (t->kind) {
        case PUT:
            for (size_t i = 0; i < t->length; ++i) source[i] = pattern(c, i);
            must_succeed(PtlPut(md, 0, t->length, PTL_ACK_REQ, peer, 0, 0, remote, NULL, 0), "PtlPut");
            /* A larger payload may be read later: the program must leave it alone. */
            if (t->length <= 64) memset(source, 0xee, sizeof source);
            break;
        case PUT_IOVEC:
            for (size_t i = 0; i < t->length; ++i) source[(i < 24 ? 128 : 192 - 24) + i] = pattern(c, i);
            must_succeed(PtlPut(vector_md, 0, t->length, PTL_ACK_REQ, peer, 0, 0, remote, NULL, 0), "PtlPut (iovec)");
            break;
        case ATOMIC_SUM:
            memcpy(source, &operand, sizeof operand);
            must_succeed(PtlAtomic(md, 0, 8, PTL_ACK_REQ, peer, 0, 0, remote, NULL, 0, PTL_SUM, PTL_INT64_T), "PtlAtomic");
            memset(source, 0xee, sizeof source);
            break;
        case FETCH_SUM:
            memcpy(source, &operand, sizeof operand);
            must_succeed(PtlFetchAtomic(fetch_md, 0, md, 0, 8, peer, 0, 0, remote, NULL, 0, PTL_SUM, PTL_INT64_T),
                  "PtlFetchAtomic");
            memset(source, 0xee, sizeof source);
            break;
        case SWAP:
            memcpy(source, &operand, sizeof operand);
            must_succeed(PtlSwap(fetch_md, 0, md, 0, 8, peer, 0, 0, remote, NULL, 0, NULL, PTL_SWAP, PTL_INT64_T), "PtlSwap");
            memset(source, 0xee, sizeof source);
            break;
        }
        for (int e = 0; e < 2; ++e) { /* SEND, then ACK or REPLY */
            ptl_event_t event = next_event(eq);
            CHECK_THAT(event.ni_fail_type == PTL_NI_OK, "%s: an event failed", t->name);
        }
        if (t->kind == FETCH_SUM || t->kind == SWAP) {
            int64_t old;
            memcpy(&old, fetched, sizeof old);
            CHECK_THAT(old == initial_of(c), "%s: the fetched value is not the target's before", t->name);
        }
    }
}

int main(void)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    int rank = start(PID, &ni, &eq);
    if (rank == 1)
        target(ni, eq);
    else
        initiator(ni, eq);
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    if (failures == 0) printf("carried_payloads: rank %d: every case as expected\n", rank);
    return failures == 0 ? 0 : 1;
}
