/* Ranks that share a simulated node: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups
 * exactly the ranks whose MPI_Get_processor_name is the same (the simulated nodes of
 * --ppn, not the one real host), and MPI_Win_allocate_shared gives those ranks one window
 * in memory they all see, alongside a window over every rank through the simulated
 * network. */
#include "mpi_check.h"

#define SEGMENT_INTS 64

static int same_node_count(const char* names, int world, const char* mine)
{
    int count = 0;
    for (int r = 0; r < world; ++r) count += strncmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, mine, MPI_MAX_PROCESSOR_NAME) == 0;
    return count;
}

/* The node communicator holds the ranks of my simulated node, in world order. */
static void check_node_communicator(MPI_Comm node, const char* names, int world, const char* mine)
{
    int size, rank;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    CHECK(size == same_node_count(names, world, mine), "node communicator of %d ranks, %d ranks on %s", size,
          same_node_count(names, world, mine), mine);
    int* members = malloc(sizeof(int) * (size_t)size);
    MPI_OK(MPI_Allgather(&check_rank, 1, MPI_INT, members, 1, MPI_INT, node));
    for (int i = 0; i < size; ++i) {
        const char* theirs = names + (size_t)members[i] * MPI_MAX_PROCESSOR_NAME;
        CHECK(strncmp(theirs, mine, MPI_MAX_PROCESSOR_NAME) == 0, "world rank %d (on %s) is in %s's node communicator",
              members[i], theirs, mine);
        CHECK(i == 0 || members[i] > members[i - 1], "node communicator not in world order");
    }
    free(members);
}

/* Each rank fills its segment of a shared window; every rank reads all segments directly. */
static void check_shared_window(MPI_Comm node)
{
    int size, rank;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    int* mine = NULL;
    MPI_Win win;
    int rc = MPI_Win_allocate_shared(SEGMENT_INTS * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    CHECK(rc == MPI_SUCCESS, "MPI_Win_allocate_shared returned %d", rc);
    if (rc != MPI_SUCCESS) return;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < SEGMENT_INTS; ++i) mine[i] = check_rank * 1000 + i;
    MPI_OK(MPI_Win_sync(win));
    MPI_OK(MPI_Barrier(node));
    MPI_OK(MPI_Win_sync(win));
    int* owners = malloc(sizeof(int) * (size_t)size);
    MPI_OK(MPI_Allgather(&check_rank, 1, MPI_INT, owners, 1, MPI_INT, node));
    for (int peer = 0; peer < size; ++peer) {
        MPI_Aint bytes;
        int unit;
        int* theirs = NULL;
        MPI_OK(MPI_Win_shared_query(win, peer, &bytes, &unit, &theirs));
        CHECK(bytes == SEGMENT_INTS * (MPI_Aint)sizeof(int) && unit == (int)sizeof(int),
              "segment of node rank %d: %ld bytes, unit %d", peer, (long)bytes, unit);
        for (int i = 0; theirs && i < SEGMENT_INTS; ++i)
            CHECK(theirs[i] == owners[peer] * 1000 + i, "segment of node rank %d, int %d: %d", peer, i, theirs[i]);
    }
    free(owners);
    MPI_OK(MPI_Win_unlock_all(win));
    MPI_OK(MPI_Win_free(&win));
}

/* A window over every rank, across nodes: each rank puts its rank into its right
 * neighbour's window. */
static void check_world_window(int world)
{
    int* base = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    *base = -1;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Put(&check_rank, 1, MPI_INT, (check_rank + 1) % world, 0, 1, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    CHECK(*base == (check_rank + world - 1) % world, "window over every rank holds %d", *base);
    MPI_OK(MPI_Win_free(&win));
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    int length;
    MPI_OK(MPI_Get_processor_name(mine, &length));
    char* names = calloc((size_t)world, MPI_MAX_PROCESSOR_NAME);
    MPI_OK(MPI_Allgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD));

    MPI_Comm node;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    check_node_communicator(node, names, world, mine);
    check_shared_window(node);
    check_world_window(world);
    MPI_OK(MPI_Comm_free(&node));
    free(names);
    return check_finish("mpi_node");
}
