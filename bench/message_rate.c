/* Benchmark program: a ping-pong of Portals puts between ranks 0 and 1, many round trips,
 * to measure how many simulated messages s4bxi processes per second of wall time and what
 * it keeps in memory. Usage: message_rate [ROUNDS [BYTES]] (10000 rounds of 8 bytes by
 * default). Every PTL_EVENT_PUT is checked for its length; the payload is not touched, so
 * that the program's own work stays out of the figures. Rank 0 prints the time its loop
 * took as CLOCK_MONOTONIC tells (simulated time under a simulator). */
#include "portals_pair.h"

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 10000;
    long bytes = argc > 2 ? atol(argv[2]) : 8;
    char *buffer = calloc(bytes > 0 ? bytes : 1, 1);
    struct portals_pair pair;
    ptl_event_t event;
    if (!buffer || rounds < 0 || bytes < 1) {
        fprintf(stderr, "usage: message_rate [ROUNDS [BYTES]]\n");
        return 2;
    }
    pair_setup(&pair, "message_rate", buffer, bytes, 256);
    int rank = pair.rank;
    double start = pair_seconds();
    for (long i = 0; i < rounds; ++i) {
        if (rank == 0)
            pair_check(PtlPut(pair.md, 0, bytes, PTL_NO_ACK_REQ, pair.peer, 0, 0, 0, NULL, 0), "message_rate", "PtlPut");
        do pair_check(PtlEQWait(pair.eq, &event), "message_rate", "PtlEQWait"); while (event.type != PTL_EVENT_PUT);
        if (event.mlength != (ptl_size_t)bytes || event.ni_fail_type != PTL_NI_OK) {
            fprintf(stderr, "message_rate: round %ld: a PUT event of %lu bytes, failure %d\n", i,
                    (unsigned long)event.mlength, event.ni_fail_type);
            return 1;
        }
        if (rank == 1)
            pair_check(PtlPut(pair.md, 0, bytes, PTL_NO_ACK_REQ, pair.peer, 0, 0, 0, NULL, 0), "message_rate", "PtlPut");
    }
    if (rank == 0)
        printf("message_rate: ok: %ld round trips of %ld B, loop %.9f s\n", rounds, bytes, pair_seconds() - start);
    PtlNIFini(pair.ni);
    PtlFini();
    free(buffer);
    return 0;
}
