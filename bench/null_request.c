/* Benchmark program: the wall cost of one request between a rank and the server, with no
 * simulated work behind it (PtlGetUid, which the server answers at once), to set beside the
 * host's hand-off limit (bench/handoff.cpp, bench/handoff.py). Every rank makes ROUNDS
 * requests. Usage: null_request [ROUNDS] (100000 by default). */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    ptl_handle_ni_t ni;
    ptl_uid_t uid;
    if (rounds < 0) {
        fprintf(stderr, "usage: null_request [ROUNDS]\n");
        return 2;
    }
    if (PtlInit() != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &ni) != PTL_OK) {
        fprintf(stderr, "null_request: Portals initialisation failed\n");
        return 1;
    }
    for (long i = 0; i < rounds; ++i)
        if (PtlGetUid(ni, &uid) != PTL_OK) {
            fprintf(stderr, "null_request: PtlGetUid failed\n");
            return 1;
        }
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
