/* What tests/multihost's raw Portals programs share: the bootstrap through PMI-1 (rank,
 * size, a logical NI whose map is built from the physical ids every rank published in the
 * key-value space), and how they fail. Under `s4bxi-launch -- mpirun`, PMI-1 is answered by
 * pmi_over_pmix.c (over mpirun's PMIx); in spawn mode (`s4bxi-launch -n N`) by the
 * simulation itself. */
#ifndef S4BXI_MULTIHOST_PMI_PORTALS_H
#define S4BXI_MULTIHOST_PMI_PORTALS_H
#include <pmi.h>
#include <portals4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int rank = -1, size = 0;

/* Ends the rank with status 1 after "NAME: rank R: FAIL why" on stderr. */
static void fail(const char *name, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: rank %d: FAIL ", name, rank);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(1);
}

/* A set-up call that must succeed (PMI_SUCCESS and PTL_OK are 0): status 2 otherwise. */
#define MUST(call)                                                                               \
    do {                                                                                         \
        int rc_ = (call);                                                                        \
        if (rc_ != 0) {                                                                          \
            fprintf(stderr, "%s:%d: rank %d: %s failed: %d\n", __FILE__, __LINE__, rank, #call, rc_); \
            exit(2);                                                                             \
        }                                                                                        \
    } while (0)

/* PMI_Init, the rank and the size, then a matching logical NI mapped by rank. */
static ptl_handle_ni_t bootstrap(void)
{
    int spawned;
    MUST(PMI_Init(&spawned));
    MUST(PMI_Get_rank(&rank));
    MUST(PMI_Get_size(&size));
    int name_max, key_max, value_max;
    MUST(PMI_KVS_Get_name_length_max(&name_max));
    MUST(PMI_KVS_Get_key_length_max(&key_max));
    MUST(PMI_KVS_Get_value_length_max(&value_max));
    char *name = malloc(name_max), *key = malloc(key_max), *value = malloc(value_max);
    MUST(PMI_KVS_Get_my_name(name, name_max));

    ptl_handle_ni_t ni;
    ptl_process_t me;
    MUST(PtlInit());
    MUST(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL, &ni));
    MUST(PtlGetPhysId(ni, &me));
    snprintf(key, key_max, "phys-%d", rank);
    snprintf(value, value_max, "%u %u", (unsigned)me.phys.nid, (unsigned)me.phys.pid);
    MUST(PMI_KVS_Put(name, key, value));
    MUST(PMI_KVS_Commit(name));
    MUST(PMI_Barrier());
    ptl_process_t *map = calloc(size, sizeof *map);
    for (int i = 0; i < size; ++i) {
        unsigned nid, pid;
        snprintf(key, key_max, "phys-%d", i);
        MUST(PMI_KVS_Get(name, key, value, value_max));
        if (sscanf(value, "%u %u", &nid, &pid) != 2) fail("bootstrap", "rank %d's id reads '%s'", i, value);
        map[i].phys.nid = nid;
        map[i].phys.pid = pid;
    }
    MUST(PtlSetMap(ni, size, map));
    free(map);
    free(name);
    free(key);
    free(value);
    return ni;
}

static void finish(ptl_handle_ni_t ni)
{
    PtlNIFini(ni);
    PtlFini();
    MUST(PMI_Finalize());
}

#endif
