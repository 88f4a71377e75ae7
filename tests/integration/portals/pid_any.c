/* Each rank asks for PTL_PID_ANY and prints the identity it got, as
 * "pid_any rank=<r> nid=<nid> pid=<pid>". Run with several ranks per node: the pids of one
 * node must differ (Open MPI's MTL asks for PTL_PID_ANY). */
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *rank_text = getenv("S4BXI_RANK");
    ptl_handle_ni_t ni;
    ptl_process_t id;
    if (PtlInit() != PTL_OK ||
        PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &ni) != PTL_OK ||
        PtlGetPhysId(ni, &id) != PTL_OK) {
        fprintf(stderr, "pid_any: Portals initialisation failed\n");
        return 2;
    }
    printf("pid_any rank=%s nid=%u pid=%u\n", rank_text ? rank_text : "?", id.phys.nid, id.phys.pid);
    PtlNIFini(ni);
    PtlFini();
    return 0;
}
