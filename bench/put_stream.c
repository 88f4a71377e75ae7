/* Benchmark program: a stream of Portals puts from rank 0 to rank 1, WINDOW puts issued
 * back to back, ROUNDS times: the time per message of NICs kept busy (bench/
 * fit_flow_model.py fits the flow model's gaps to it). With "ack" (the default) each put
 * asks for an ACK and rank 0 awaits the window's ACKs; with "noack" rank 1 answers the
 * window with one put of its own, which rank 0 awaits.
 * Usage: put_stream [ROUNDS [WINDOW [BYTES [ack|noack]]]] (100 rounds of 64 puts of 8 bytes).
 * Rank 0 prints the time its loop took as CLOCK_MONOTONIC tells (simulated time under a
 * simulator). */
#include <string.h>

#include "portals_pair.h"

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100;
    long window = argc > 2 ? atol(argv[2]) : 64;
    long bytes = argc > 3 ? atol(argv[3]) : 8;
    int acks_wanted = argc > 4 ? strcmp(argv[4], "noack") != 0 : 1;
    char *buffer = calloc(bytes > 0 ? bytes : 1, 1);
    struct portals_pair pair;
    ptl_event_t event;
    if (!buffer || rounds < 0 || window < 1 || window > 128 || bytes < 1) {
        fprintf(stderr, "usage: put_stream [ROUNDS [WINDOW (1 to 128) [BYTES [ack|noack]]]]\n");
        return 2;
    }
    pair_setup(&pair, "put_stream", buffer, bytes, 512);
    int rank = pair.rank;
    double start = pair_seconds();
    for (long i = 0; i < rounds; ++i) {
        for (long k = 0; k < window; ++k) {
            if (rank == 0) {
                pair_check(PtlPut(pair.md, 0, bytes, acks_wanted ? PTL_ACK_REQ : PTL_NO_ACK_REQ, pair.peer, 0, 0, 0,
                                  NULL, 0), "put_stream", "PtlPut");
                continue;
            }
            do pair_check(PtlEQWait(pair.eq, &event), "put_stream", "PtlEQWait"); while (event.type != PTL_EVENT_PUT);
            if (event.ni_fail_type != PTL_NI_OK) {
                fprintf(stderr, "put_stream: a PUT event with failure %d\n", event.ni_fail_type);
                return 1;
            }
        }
        if (!acks_wanted) { /* the window's end, told by rank 1 */
            if (rank == 1) pair_check(PtlPut(pair.md, 0, 1, PTL_NO_ACK_REQ, pair.peer, 0, 0, 0, NULL, 0), "put_stream", "PtlPut");
            else do pair_check(PtlEQWait(pair.eq, &event), "put_stream", "PtlEQWait"); while (event.type != PTL_EVENT_PUT);
            continue;
        }
        for (long acks = 0; rank == 0 && acks < window;) {
            pair_check(PtlEQWait(pair.eq, &event), "put_stream", "PtlEQWait");
            if (event.type != PTL_EVENT_ACK) continue;
            if (event.ni_fail_type != PTL_NI_OK) {
                fprintf(stderr, "put_stream: an ACK with failure %d\n", event.ni_fail_type);
                return 1;
            }
            ++acks;
        }
    }
    if (rank == 0)
        printf("put_stream: ok: %ld rounds of %ld puts of %ld B, loop %.9f s\n", rounds, window, bytes,
               pair_seconds() - start);
    PtlNIFini(pair.ni);
    PtlFini();
    free(buffer);
    return 0;
}
