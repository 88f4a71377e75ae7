/* When does PtlEQWait return an event that was written while the process was not
 * waiting for it?
 *
 * Rank 0 puts 8 B to rank 1 with PTL_ACK_REQ, waits for SEND, sleeps D ns, then calls
 * PtlEQWait for the ACK. Rank 1's ME has COMM events disabled. With D = 0 the process is
 * already waiting when its NIC writes the ACK event; with larger D it calls PtlEQWait
 * after the event was written but possibly before the event's hand-over latency (PCIe,
 * 250 ns on quito) has elapsed. One line per step, as timeline.c:
 *     case=wait<D> step=<call|SEND|eqwait|ACK> t=<ns>
 * The rank comes from the S4BXI_RANK environment variable (0 if unset). */
#define _GNU_SOURCE
#include "timeline_steps.h"

#define PID 5

static void wait_step(long delay, const char *what, long long t)
{
    char name[32];
    snprintf(name, sizeof name, "wait%ld", delay);
    step(name, what, t);
}

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    static char buffer[64];
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_event_t event;
    must_succeed(PtlInit(), "PtlInit");
    must_succeed(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni), "PtlNIInit");
    must_succeed(PtlEQAlloc(ni, 64, &eq), "PtlEQAlloc");
    ptl_process_t peer = {.phys = {1, PID}};
    if (rank == 1) {
        ptl_pt_index_t pt;
        must_succeed(PtlPTAlloc(ni, 0, eq, 0, &pt), "PtlPTAlloc");
        ptl_me_t me = {buffer, sizeof buffer, PTL_CT_NONE, PTL_UID_ANY,
                       PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE | PTL_ME_EVENT_COMM_DISABLE,
                       {.phys = {PTL_NID_ANY, PTL_PID_ANY}}, 0, 0, 0};
        ptl_handle_me_t handle;
        must_succeed(PtlMEAppend(ni, 0, &me, PTL_PRIORITY_LIST, NULL, &handle), "PtlMEAppend");
        struct timespec long_enough = {0, 50000000};
        nanosleep(&long_enough, NULL); /* every case is over by then */
    } else {
        ptl_md_t descriptor = {buffer, sizeof buffer, 0, eq, PTL_CT_NONE};
        ptl_handle_md_t md;
        must_succeed(PtlMDBind(ni, &descriptor, &md), "PtlMDBind");
        const long delays[] = {0, 1500, 1700, 1800, 2000};
        for (size_t i = 0; i < sizeof delays / sizeof *delays; ++i) {
            struct timespec quiet = {0, 1000000};
            nanosleep(&quiet, NULL); /* rank 1's entry is in place; the previous case is over */
            wait_step(delays[i], "call", now());
            must_succeed(PtlPut(md, 0, 8, PTL_ACK_REQ, peer, 0, 0, 0, NULL, 0), "PtlPut");
            must_succeed(PtlEQWait(eq, &event), "PtlEQWait");
            wait_step(delays[i], event.type == PTL_EVENT_SEND ? "SEND" : "OTHER", now());
            struct timespec pause = {0, delays[i]};
            if (delays[i]) nanosleep(&pause, NULL);
            wait_step(delays[i], "eqwait", now());
            must_succeed(PtlEQWait(eq, &event), "PtlEQWait");
            wait_step(delays[i], event.type == PTL_EVENT_ACK ? "ACK" : "OTHER", now());
        }
    }
    must_succeed(PtlNIFini(ni), "PtlNIFini");
    PtlFini();
    return 0;
}
