/* A raw Portals program that bootstraps through PMI-1 only, as programs written for other
 * process managers do: no S4BXI_* variable is read. Each rank publishes the physical id of
 * its logical NI (PtlGetPhysId) in the key-value space, everybody builds the map with
 * PtlSetMap after a PMI_Barrier, and each rank puts its rank to its right neighbour,
 * addressed by rank. Also checks the PMI return codes of bad calls.
 *
 * With the argument "skip-barrier", the last rank exits without the final PMI_Barrier: the
 * others must be reported in a deadlock, not hang (check_pmi.py). */
#include <pmi.h>
#include <portals4.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../test_checks.h"

static ptl_handle_eq_t eq;
/* The last event of each kind taken from the queue: a rank's ACK may come before the put
 * its left neighbour makes to it, and must not be lost while waiting for that put. */
static ptl_event_t taken[PTL_EVENT_SEARCH + 1];
static int has_taken[PTL_EVENT_SEARCH + 1];
static ptl_event_t wait_event(ptl_event_kind_t kind)
{
    while (!has_taken[kind]) {
        ptl_event_t event;
        if (PtlEQWait(eq, &event) != PTL_OK) {
            expect(0, "PtlEQWait");
            exit(1);
        }
        if ((unsigned)event.type <= PTL_EVENT_SEARCH) {
            taken[event.type] = event;
            has_taken[event.type] = 1;
        }
    }
    has_taken[kind] = 0;
    return taken[kind];
}

int main(int argc, char **argv)
{
    int spawned = -1, initialized = -1, size = 0, name_max = 0, key_max = 0, value_max = 0;
    if (PMI_Initialized(&initialized) != PMI_SUCCESS) return 2; /* outside spawn mode (check_pmi.py) */
    expect(initialized == PMI_FALSE, "not initialized before PMI_Init");
    EXPECT_RC(PMI_Init(&spawned), PMI_SUCCESS);
    EXPECT_RC(PMI_Initialized(&initialized), PMI_SUCCESS);
    expect(initialized == PMI_TRUE && spawned == PMI_FALSE, "initialized, not spawned");
    EXPECT_RC(PMI_Get_rank(&rank), PMI_SUCCESS);
    EXPECT_RC(PMI_Get_size(&size), PMI_SUCCESS);
    expect(size >= 2 && rank >= 0 && rank < size, "rank and size");
    EXPECT_RC(PMI_KVS_Get_name_length_max(&name_max), PMI_SUCCESS);
    EXPECT_RC(PMI_KVS_Get_key_length_max(&key_max), PMI_SUCCESS);
    EXPECT_RC(PMI_KVS_Get_value_length_max(&value_max), PMI_SUCCESS);
    expect(name_max >= 16 && key_max >= 32 && value_max >= 256, "length maxima");
    char *name = malloc(name_max), *key = malloc(key_max), *value = malloc(value_max);
    EXPECT_RC(PMI_KVS_Get_my_name(name, name_max), PMI_SUCCESS);
    EXPECT_RC(PMI_KVS_Get_my_name(name, 1), PMI_ERR_INVALID_LENGTH);

    /* Bad calls. */
    EXPECT_RC(PMI_KVS_Put("no-such-kvs", "k", "v"), PMI_ERR_INVALID_ARG);
    EXPECT_RC(PMI_KVS_Put(name, "", "v"), PMI_ERR_INVALID_KEY);
    char *too_long = calloc(value_max + key_max + 1, 1); /* the maxima count the NUL */
    memset(too_long, 'x', key_max);
    EXPECT_RC(PMI_KVS_Put(name, too_long, "v"), PMI_ERR_INVALID_KEY_LENGTH);
    too_long[key_max - 1] = '\0';
    EXPECT_RC(PMI_KVS_Put(name, too_long, "the longest key"), PMI_SUCCESS);
    memset(too_long, 'x', value_max);
    EXPECT_RC(PMI_KVS_Put(name, "long", too_long), PMI_ERR_INVALID_VAL_LENGTH);
    EXPECT_RC(PMI_KVS_Get(name, "never-put", value, value_max), PMI_FAIL);

    /* Publish the physical id of the logical NI, then build the map. */
    ptl_handle_ni_t ni;
    ptl_process_t me;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_LOGICAL, PTL_PID_ANY, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlGetPhysId(ni, &me), PTL_OK);
    snprintf(key, key_max, "phys-%d", rank);
    snprintf(value, value_max, "%u %u", (unsigned)me.phys.nid, (unsigned)me.phys.pid);
    EXPECT_RC(PMI_KVS_Put(name, key, value), PMI_SUCCESS);
    EXPECT_RC(PMI_KVS_Commit(name), PMI_SUCCESS);
    EXPECT_RC(PMI_Barrier(), PMI_SUCCESS);
    ptl_process_t *map = calloc(size, sizeof *map);
    for (int i = 0; i < size; ++i) {
        unsigned nid, pid;
        snprintf(key, key_max, "phys-%d", i);
        EXPECT_RC(PMI_KVS_Get(name, key, value, value_max), PMI_SUCCESS);
        expect(sscanf(value, "%u %u", &nid, &pid) == 2, "a peer's id reads back");
        map[i].phys.nid = nid;
        map[i].phys.pid = pid;
    }
    EXPECT_RC(PMI_KVS_Get(name, key, value, 2), PMI_ERR_INVALID_LENGTH);
    EXPECT_RC(PtlSetMap(ni, size, map), PTL_OK);

    /* Each rank puts its rank to its right neighbour, by rank. */
    static int received = -1, sent;
    sent = rank;
    ptl_pt_index_t pt;
    ptl_handle_me_t me_handle;
    ptl_handle_md_t md;
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    EXPECT_RC(PtlPTAlloc(ni, 0, eq, 5, &pt), PTL_OK);
    ptl_me_t entry = {&received, sizeof received, PTL_CT_NONE, PTL_UID_ANY,
                      PTL_ME_OP_PUT | PTL_ME_EVENT_LINK_DISABLE, {.rank = PTL_RANK_ANY}, 7, 0, 0};
    EXPECT_RC(PtlMEAppend(ni, pt, &entry, PTL_PRIORITY_LIST, NULL, &me_handle), PTL_OK);
    EXPECT_RC(PMI_Barrier(), PMI_SUCCESS); /* every ME is there before any put */
    ptl_md_t desc = {&sent, sizeof sent, 0, eq, PTL_CT_NONE};
    EXPECT_RC(PtlMDBind(ni, &desc, &md), PTL_OK);
    ptl_process_t right = {.rank = (ptl_rank_t)((rank + 1) % size)};
    EXPECT_RC(PtlPut(md, 0, sizeof sent, PTL_ACK_REQ, right, pt, 7, 0, NULL, 0), PTL_OK);
    ptl_event_t put = wait_event(PTL_EVENT_PUT);
    expect(received == (rank + size - 1) % size && put.initiator.rank == (ptl_rank_t)((rank + size - 1) % size),
           "the left neighbour's rank arrived, from that rank");
    expect(wait_event(PTL_EVENT_ACK).ni_fail_type == PTL_NI_OK, "the put was acknowledged");

    if (argc > 1 && strcmp(argv[1], "skip-barrier") == 0 && rank == size - 1) return 0;
    /* Back-to-back barriers: ranks leaving one enter the next while the last arrival may
     * still be waking the others (with 4 ranks a waiter used to be lost). */
    int passed = 0;
    for (int i = 0; i < 20; ++i) passed += PMI_Barrier() == PMI_SUCCESS;
    expect(passed == 20, "20 barriers in a row");
    PtlNIFini(ni);
    PtlFini();
    EXPECT_RC(PMI_Finalize(), PMI_SUCCESS);
    return 0;
}
