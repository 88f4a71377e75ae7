/* Both ranks wait for an event that nobody will ever send: the run must end with a
 * report naming what each rank waits on, not hang. With the argument "poll" they poll
 * PtlEQGet for it instead: the fast-forward of empty polls must not run the simulated
 * clock to infinity (a server crash), but end in the same report. */
#include <portals4.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    ptl_event_t event;
    if (PtlInit() != PTL_OK) return 2;
    if (PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_PID_ANY, NULL, NULL, &ni) != PTL_OK) return 2;
    if (PtlEQAlloc(ni, 16, &eq) != PTL_OK) return 2;
    if (argc > 1 && argv[1][0] == 'p')
        while (PtlEQGet(eq, &event) == PTL_EQ_EMPTY) continue;
    else
        PtlEQWait(eq, &event);
    puts("unreachable");
    return 0;
}
