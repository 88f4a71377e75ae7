/* A small Get right after a large Put between the same two nodes: nothing of the Put may
 * still hold the Get once the Put has completed. Rank 1 exposes one matching ME (2 MiB,
 * put/get allowed, LINK events disabled); rank 0 knocks until it exists. Cases, 1 ms apart:
 *     get8, get512         a Get alone, on idle NICs;
 *     after1M_get8/_get512  a 1 MiB Put with PTL_ACK_REQ; rank 0 waits for its SEND and ACK
 *                           (the target has seen its PUT by then), then issues the Get.
 * One line per step, "case=<name> step=<call|return|SEND|ACK|REPLY|PUT|GET> t=<ns>"; the
 * Get's "call" is the date the Get was issued (a Put's steps are named put_SEND, put_ACK,
 * put_PUT). The rank comes from S4BXI_RANK. */
#define _GNU_SOURCE
#include <stdint.h>

#include "timeline_steps.h"

#define BUFFER (2 << 20)
#define PID 11
#define LARGE (1 << 20)

struct test_case {
    const char *name;
    int put_first;
    size_t get_size;
};
static const struct test_case cases[] = {
    {"get8", 0, 8},
    {"get512", 0, 512},
    {"after1M_get8", 1, 8},
    {"after1M_get512", 1, 512},
};

static ptl_handle_ni_t ni;
static ptl_handle_eq_t eq;

int main(int argc, char **argv)
{
    unsigned char *buffer = calloc(BUFFER, 1);
    int rank = start(PID, &ni, &eq);
    ptl_process_t peer = {.phys = {.nid = 1, .pid = PID}};

    if (rank == 1) {
        expose_entry(ni, eq, buffer, BUFFER);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            if (!selected(argc, argv, cases[i].name)) continue;
            for (int e = 0; e < 1 + cases[i].put_first; ++e) {
                ptl_event_t event = next_event(eq);
                step(cases[i].name, event.type == PTL_EVENT_PUT ? "put_PUT" : event_name(event.type), now());
            }
        }
    } else {
        ptl_md_t plain = {buffer, BUFFER, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        must_succeed(PtlMDBind(ni, &plain, &md), "PtlMDBind");
        knock(md, eq, peer);
        struct timespec quiet = {0, 1000000};
        for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
            const struct test_case *c = &cases[i];
            if (!selected(argc, argv, c->name)) continue;
            nanosleep(&quiet, NULL); /* let the previous case drain completely */
            if (c->put_first) {
                step(c->name, "put_call", now());
                must_succeed(PtlPut(md, 0, LARGE, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
                for (int e = 0; e < 2; ++e) {
                    ptl_event_t event = next_event(eq);
                    if (event.ni_fail_type != PTL_NI_OK) {
                        fprintf(stderr, "get_after_put: the large Put failed: %d\n", event.ni_fail_type);
                        return 3;
                    }
                    step(c->name, event.type == PTL_EVENT_SEND ? "put_SEND" : "put_ACK", now());
                }
            }
            step(c->name, "call", now());
            must_succeed(PtlGet(md, LARGE, c->get_size, peer, 0, 0, 0, NULL), "PtlGet");
            step(c->name, "return", now());
            ptl_event_t event = next_event(eq);
            step(c->name, event_name(event.type), now());
        }
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    free(buffer);
    return 0;
}
