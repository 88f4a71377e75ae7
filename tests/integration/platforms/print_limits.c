/* Prints the limits PtlNIInit reports, one line per NI as "<what> max_entries=<n> ...":
 *   default:    no desired limits (the platform's nic.limits.*);
 *   caps:       desired limits all 0, which ask for the caps (nic.limit_caps.*);
 *   desired100: desired limits all 100 (the smaller of 100 and the cap);
 * then what the first NI enforces, as "enforced highest_pt_index=<i> eqs=<n>": the highest
 * portal table index PtlPTAlloc accepts, and how many event queues PtlEQAlloc gives (at
 * most 64 are asked for). */
#include <portals4.h>
#include <stdio.h>
#include <string.h>

static void print(const char *what, const ptl_ni_limits_t *l)
{
    printf("%s max_entries=%d max_unexpected_headers=%d max_mds=%d max_cts=%d max_eqs=%d max_pt_index=%d "
           "max_iovecs=%d max_list_size=%d max_triggered_ops=%d max_msg_size=%llu max_atomic_size=%llu "
           "max_fetch_atomic_size=%llu max_waw_ordered_size=%llu max_war_ordered_size=%llu "
           "max_volatile_size=%llu features=%u\n",
           what, l->max_entries, l->max_unexpected_headers, l->max_mds, l->max_cts, l->max_eqs, l->max_pt_index,
           l->max_iovecs, l->max_list_size, l->max_triggered_ops, (unsigned long long)l->max_msg_size,
           (unsigned long long)l->max_atomic_size, (unsigned long long)l->max_fetch_atomic_size,
           (unsigned long long)l->max_waw_ordered_size, (unsigned long long)l->max_war_ordered_size,
           (unsigned long long)l->max_volatile_size, l->features);
}

int main(void)
{
    static const unsigned int kinds[3] = {PTL_NI_MATCHING | PTL_NI_PHYSICAL, PTL_NI_NO_MATCHING | PTL_NI_PHYSICAL,
                                          PTL_NI_MATCHING | PTL_NI_LOGICAL};
    static const char *names[3] = {"default", "caps", "desired100"};
    ptl_handle_ni_t ni[3];
    ptl_ni_limits_t desired, actual;
    int i;

    if (PtlInit() != PTL_OK) {
        fprintf(stderr, "print_limits: PtlInit failed\n");
        return 2;
    }
    for (i = 0; i < 3; ++i) {
        memset(&desired, 0, sizeof desired);
        if (i == 2) {
            desired.max_entries = desired.max_unexpected_headers = desired.max_mds = desired.max_cts = 100;
            desired.max_eqs = desired.max_pt_index = desired.max_iovecs = desired.max_list_size = 100;
            desired.max_triggered_ops = 100;
            desired.max_msg_size = desired.max_atomic_size = desired.max_fetch_atomic_size = 100;
            desired.max_waw_ordered_size = desired.max_war_ordered_size = desired.max_volatile_size = 100;
        }
        if (PtlNIInit(PTL_IFACE_DEFAULT, kinds[i], PTL_PID_ANY, i == 0 ? NULL : &desired, &actual, &ni[i]) != PTL_OK) {
            fprintf(stderr, "print_limits: PtlNIInit (%s) failed\n", names[i]);
            return 2;
        }
        print(names[i], &actual);
    }
    {
        ptl_pt_index_t pt;
        ptl_handle_eq_t eq;
        int index = 0, eqs = 0;
        while (index <= 256 && PtlPTAlloc(ni[0], 0, PTL_EQ_NONE, (ptl_pt_index_t)index, &pt) == PTL_OK) ++index;
        while (eqs < 64 && PtlEQAlloc(ni[0], 4, &eq) == PTL_OK) ++eqs;
        printf("enforced highest_pt_index=%d eqs=%d\n", index - 1, eqs);
    }
    for (i = 0; i < 3; ++i) PtlNIFini(ni[i]);
    PtlFini();
    return 0;
}
