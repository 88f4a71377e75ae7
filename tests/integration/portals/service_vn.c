/* Service virtual networks: a small Put measured while another rank of the same node
 * floods the NIC with large Puts. Four ranks, two per node: rank 0 sends FLOOD Puts of
 * 1 MiB to rank 2 without waiting, rank 1 sends one 8-byte Put to rank 3 a moment later
 * and prints how long its ACK took: "probe_ack_ns=N". On the compute VNs the probe
 * waits behind the flood in the node's TX engine; a rank given the service VNs
 * (--service-ranks 1) has engines of its own and only shares links with the flood. */
#define _GNU_SOURCE
#include <unistd.h>

#include "timeline_steps.h"

enum { FLOOD = 8, PID = 11, PT = 0 }; /* pids: PID on the first rank of a node, PID + 1 on the second */
#define LARGE (1 << 20)

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    unsigned char *buffer = calloc(LARGE, 1);
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_handle_ct_t ct;
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID + rank % 2, NULL, NULL, &ni), "PtlNIInit");
    must_succeed(PtlEQAlloc(ni, 64, &eq), "PtlEQAlloc");
    must_succeed(PtlCTAlloc(ni, &ct), "PtlCTAlloc");
    ptl_ct_event_t count;
    if (rank >= 2) { /* sinks: rank 2 takes the flood, rank 3 the probe */
        ptl_pt_index_t pt;
        must_succeed(PtlPTAlloc(ni, 0, eq, PT, &pt), "PtlPTAlloc"); /* PUT events: timings as in a ping-pong */
        ptl_me_t me = {buffer, LARGE, ct, PTL_UID_ANY, PTL_ME_OP_PUT | PTL_ME_EVENT_CT_COMM,
                       {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
        ptl_handle_me_t handle;
        must_succeed(PtlMEAppend(ni, PT, &me, PTL_PRIORITY_LIST, NULL, &handle), "PtlMEAppend");
        must_succeed(PtlCTWait(ct, rank == 2 ? FLOOD : 1, &count), "PtlCTWait");
    } else {
        ptl_md_t desc = {buffer, LARGE, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        must_succeed(PtlMDBind(ni, &desc, &md), "PtlMDBind");
        usleep(100); /* simulated: the sinks' entries are in place */
        ptl_process_t sink = {.phys = {1, PID + rank}}; /* rank 0 -> rank 2, rank 1 -> rank 3 */
        if (rank == 0) {
            for (int i = 0; i < FLOOD; ++i) must_succeed(PtlPut(md, 0, LARGE, PTL_ACK_REQ, sink, PT, 0, 0, NULL, 0), "PtlPut");
            for (int acks = 0; acks < FLOOD;)
                if (next_event(eq).type == PTL_EVENT_ACK) ++acks;
        } else {
            usleep(2); /* the flood is queued */
            long long call = now();
            must_succeed(PtlPut(md, 0, 8, PTL_ACK_REQ, sink, PT, 0, 0, NULL, 0), "PtlPut");
            ptl_event_t event;
            do event = next_event(eq); while (event.type != PTL_EVENT_ACK);
            printf("probe_ack_ns=%lld\n", now() - call);
        }
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    return 0;
}
