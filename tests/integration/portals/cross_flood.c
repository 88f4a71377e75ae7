/* Two ranks on two nodes flood each other with acknowledged puts, far more than the NICs
 * have E2E entries (run with --set nic.e2e_entries=4). Each node's requests take every
 * entry; the Portals ACKs that would free them are responses, which need entries too.
 * The run must end, every put acknowledged and received. Exit status 0 on success. */
#define _POSIX_C_SOURCE 200809L
#include <pmi.h>
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "entries.h"

#include "../test_checks.h"

#define PID 44
#define PT 0
#define PUTS 200

int main(void)
{
    static char target[64], source[64];
    ptl_handle_ni_t ni;
    int spawned;
    MUST_SUCCEED(PMI_Init(&spawned)); /* PMI_SUCCESS is 0, as PTL_OK */
    MUST_SUCCEED(PtlInit());
    MUST_SUCCEED(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PID, NULL, NULL, &ni));
    ptl_process_t me, peer;
    MUST_SUCCEED(PtlGetPhysId(ni, &me));
    peer.phys.nid = me.phys.nid ^ 1;
    peer.phys.pid = PID;
    ptl_handle_eq_t eq;
    MUST_SUCCEED(PtlEQAlloc(ni, 4 * PUTS, &eq));
    ptl_pt_index_t pt;
    MUST_SUCCEED(PtlPTAlloc(ni, 0, eq, PT, &pt));
    ptl_me_t entry = any_source_entry(target, sizeof target, PTL_CT_NONE, PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE);
    ptl_handle_me_t me_handle;
    MUST_SUCCEED(PtlMEAppend(ni, PT, &entry, PTL_PRIORITY_LIST, NULL, &me_handle));
    ptl_md_t descriptor = {source, sizeof source, PTL_MD_EVENT_SEND_DISABLE, eq, PTL_CT_NONE};
    ptl_handle_md_t md;
    MUST_SUCCEED(PtlMDBind(ni, &descriptor, &md));

    /* Both entries exist before either rank sends: the barrier, then time for the other's
     * append to reach its NIC. A simulated delay alone does not order them under the measured
     * CPU model, where the set-up's cost is the host's CPU time. */
    MUST_SUCCEED(PMI_Barrier());
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
    for (int i = 0; i < PUTS; ++i) MUST_SUCCEED(PtlPut(md, 0, 8, PTL_ACK_REQ, peer, PT, 0, 0, NULL, 0));
    int acks = 0, puts = 0;
    while (acks < PUTS || puts < PUTS) {
        ptl_event_t event;
        MUST_SUCCEED(PtlEQWait(eq, &event));
        if (event.ni_fail_type != PTL_NI_OK) {
            fprintf(stderr, "cross_flood: event %d failed with %d\n", event.type, event.ni_fail_type);
            return 3;
        }
        if (event.type == PTL_EVENT_ACK) ++acks;
        else if (event.type == PTL_EVENT_PUT) ++puts;
    }
    MUST_SUCCEED(PtlMDRelease(md));
    MUST_SUCCEED(PtlMEUnlink(me_handle));
    MUST_SUCCEED(PtlPTFree(ni, pt));
    MUST_SUCCEED(PtlEQFree(eq));
    MUST_SUCCEED(PtlNIFini(ni));
    PtlFini();
    return 0;
}
