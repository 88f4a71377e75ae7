/* Point-to-point: blocking and non-blocking sends of 1 B to 4 MiB (eager and rendezvous
 * paths), MPI_ANY_SOURCE / MPI_ANY_TAG, MPI_Probe / MPI_Iprobe, tag selection and
 * message order; every byte checked. Optionally asserts simulated times derived from the
 * model (run_mpi.py computes them from tests/testkit/model.py):
 *
 *   --min-one-way-ns T   a 0-byte message between two nodes takes at least T ns one way
 *   --min-4mib-ns T      a 4 MiB message between two nodes takes at least T ns
 *
 * Needs at least 2 ranks. */
#include "mpi_check.h"

static int rank, size;

static const size_t kSizes[] = {1, 8, 100, 1024, 2048, 2049, 4096, 65536, 65537, 1 << 20, 4 << 20};
#define NSIZES (sizeof kSizes / sizeof kSizes[0])

/* Each rank sends to the next and receives from the previous, blocking. */
static void ring_blocking(unsigned char* send, unsigned char* recv)
{
    int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    for (size_t s = 0; s < NSIZES; ++s) {
        size_t n = kSizes[s];
        int tag = (int)s;
        fill(send, n, rank, tag);
        memset(recv, 0, n);
        MPI_Status status;
        if (rank % 2 == 0) {
            MPI_OK(MPI_Send(send, (int)n, MPI_BYTE, next, tag, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(recv, (int)n, MPI_BYTE, previous, tag, MPI_COMM_WORLD, &status));
        } else {
            MPI_OK(MPI_Recv(recv, (int)n, MPI_BYTE, previous, tag, MPI_COMM_WORLD, &status));
            MPI_OK(MPI_Send(send, (int)n, MPI_BYTE, next, tag, MPI_COMM_WORLD));
        }
        int count = -1;
        MPI_Get_count(&status, MPI_BYTE, &count);
        CHECK(count == (int)n, "ring, %zu bytes: count %d", n, count);
        CHECK(status.MPI_SOURCE == previous && status.MPI_TAG == tag, "ring, %zu bytes: source %d tag %d", n,
              status.MPI_SOURCE, status.MPI_TAG);
        size_t bad = mismatches(recv, n, previous, tag);
        CHECK(bad == 0, "ring, %zu bytes: %zu bytes differ", n, bad);
    }
}

/* Every rank sends to every other at once, non-blocking, sizes differing per pair. */
static void all_pairs_nonblocking(void)
{
    const int tag = 100;
    MPI_Request* requests = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    unsigned char** in = calloc((size_t)size, sizeof *in);
    unsigned char** out = calloc((size_t)size, sizeof *out);
    size_t* in_size = calloc((size_t)size, sizeof *in_size);
    int count = 0;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        /* From peer to me; one pair in each direction goes through rendezvous. */
        in_size[peer] = (peer + rank) % 3 == 0 ? (size_t)(300000 + peer) : (size_t)(1000 * (peer + 1) + rank);
        in[peer] = calloc(in_size[peer], 1);
        MPI_OK(MPI_Irecv(in[peer], (int)in_size[peer], MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[count++]));
    }
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        size_t n = (peer + rank) % 3 == 0 ? (size_t)(300000 + rank) : (size_t)(1000 * (rank + 1) + peer);
        out[peer] = malloc(n);
        fill(out[peer], n, rank, tag + peer);
        MPI_OK(MPI_Isend(out[peer], (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &requests[count++]));
    }
    MPI_Status* statuses = malloc(sizeof(MPI_Status) * (size_t)count);
    MPI_OK(MPI_Waitall(count, requests, statuses));
    int r = 0;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        int got = -1;
        MPI_Get_count(&statuses[r++], MPI_BYTE, &got);
        CHECK(got == (int)in_size[peer], "non-blocking from %d: count %d, expected %zu", peer, got, in_size[peer]);
        size_t bad = mismatches(in[peer], in_size[peer], peer, tag + rank);
        CHECK(bad == 0, "non-blocking from %d: %zu of %zu bytes differ", peer, bad, in_size[peer]);
        free(in[peer]);
        free(out[peer]);
    }
    free(statuses);
    free(requests);
    free(in);
    free(out);
    free(in_size);
}

/* Rank 0 receives one message from each other rank with MPI_ANY_SOURCE / MPI_ANY_TAG,
 * then the same again discovering sizes with MPI_Probe (small and rendezvous sizes). */
static void any_source_and_probe(void)
{
    for (int round = 0; round < 2; ++round) {
        const int probe = round == 1;
        if (rank == 0) {
            int* seen = calloc((size_t)size, sizeof *seen);
            for (int i = 1; i < size; ++i) {
                MPI_Status status;
                unsigned char* buffer;
                int count = -1;
                if (probe) {
                    MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
                    MPI_Get_count(&status, MPI_BYTE, &count);
                    buffer = malloc(count > 0 ? (size_t)count : 1);
                    int source = status.MPI_SOURCE, tag = status.MPI_TAG;
                    MPI_OK(MPI_Recv(buffer, count, MPI_BYTE, source, tag, MPI_COMM_WORLD, &status));
                } else {
                    size_t capacity = 1 << 20;
                    buffer = malloc(capacity);
                    MPI_OK(MPI_Recv(buffer, (int)capacity, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                    &status));
                    MPI_Get_count(&status, MPI_BYTE, &count);
                }
                int source = status.MPI_SOURCE;
                CHECK(source > 0 && source < size, "round %d: source %d", round, source);
                if (source <= 0 || source >= size) {
                    free(buffer);
                    continue;
                }
                ++seen[source];
                CHECK(status.MPI_TAG == 200 + source, "round %d: tag %d from %d", round, status.MPI_TAG, source);
                size_t expected = probe ? (size_t)(source * 200000 + 3) : (size_t)(source * 10 + 1);
                CHECK(count == (int)expected, "round %d: %d bytes from %d, expected %zu", round, count, source, expected);
                if (count == (int)expected) {
                    size_t bad = mismatches(buffer, expected, source, status.MPI_TAG);
                    CHECK(bad == 0, "round %d: %zu bytes from %d differ", round, bad, source);
                }
                free(buffer);
            }
            for (int source = 1; source < size; ++source)
                CHECK(seen[source] == 1, "round %d: %d messages from %d", round, seen[source], source);
            free(seen);
        } else {
            size_t n = probe ? (size_t)(rank * 200000 + 3) : (size_t)(rank * 10 + 1);
            unsigned char* buffer = malloc(n);
            fill(buffer, n, rank, 200 + rank);
            MPI_OK(MPI_Send(buffer, (int)n, MPI_BYTE, 0, 200 + rank, MPI_COMM_WORLD));
            free(buffer);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Rank 1 sends tags 1, 2, 3 then five messages with tag 4; rank 0 takes tag 3 first (its
 * Iprobe must find it), then 2, then 1, then the five tag-4 messages in order. */
static void tags_and_order(void)
{
    if (rank == 1) {
        for (int tag = 1; tag <= 3; ++tag) MPI_OK(MPI_Send(&tag, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
        for (int i = 0; i < 5; ++i) MPI_OK(MPI_Send(&i, 1, MPI_INT, 0, 4, MPI_COMM_WORLD));
    } else if (rank == 0) {
        int flag = 0;
        MPI_Status status;
        while (!flag) MPI_OK(MPI_Iprobe(1, 3, MPI_COMM_WORLD, &flag, &status));
        CHECK(status.MPI_TAG == 3 && status.MPI_SOURCE == 1, "Iprobe found tag %d from %d", status.MPI_TAG,
              status.MPI_SOURCE);
        for (int tag = 3; tag >= 1; --tag) {
            int value = -1;
            MPI_OK(MPI_Recv(&value, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(value == tag, "tag %d carried %d", tag, value);
        }
        for (int i = 0; i < 5; ++i) {
            int value = -1;
            MPI_OK(MPI_Recv(&value, 1, MPI_INT, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK(value == i, "message %d of tag 4 carried %d (not in order)", i, value);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The lowest rank on another node than rank 0 (processor names are the simulated nodes'),
 * or -1. */
static int peer_on_other_node(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    int length;
    MPI_Get_processor_name(name, &length);
    char* names = malloc((size_t)size * MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
    int peer = -1;
    for (int r = 1; r < size && peer < 0; ++r)
        if (strcmp(names + (size_t)r * MPI_MAX_PROCESSOR_NAME, names) != 0) peer = r;
    free(names);
    return peer;
}

/* Simulated durations between rank 0 and `peer`, against the model's lower bounds. */
static void timings(int peer, double min_one_way_ns, double min_4mib_ns)
{
    const int iterations = 20;
    static unsigned char big[4 << 20];
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 || rank == peer) {
        int other = rank == 0 ? peer : 0;
        long long start = monotonic_ns();
        for (int i = 0; i < iterations; ++i) {
            if (rank == 0) {
                MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, other, 300, MPI_COMM_WORLD));
                MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, other, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, other, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, other, 300, MPI_COMM_WORLD));
            }
        }
        double one_way = (double)(monotonic_ns() - start) / (2.0 * iterations);
        /* 4 MiB from rank 0 to the peer, then a 0-byte reply: the transfer takes at least
         * the message's time on the network. */
        start = monotonic_ns();
        if (rank == 0) {
            fill(big, sizeof big, 0, 301);
            MPI_OK(MPI_Send(big, (int)sizeof big, MPI_BYTE, other, 301, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, other, 302, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv(big, (int)sizeof big, MPI_BYTE, other, 301, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, other, 302, MPI_COMM_WORLD));
            CHECK(mismatches(big, sizeof big, 0, 301) == 0, "4 MiB message damaged");
        }
        double transfer = (double)(monotonic_ns() - start);
        if (rank == 0) {
            CHECK(one_way >= min_one_way_ns, "0-byte one-way latency %.1f ns, below the model's %.1f ns", one_way,
                  min_one_way_ns);
            CHECK(one_way < 1e6, "0-byte one-way latency %.1f ns", one_way);
            CHECK(transfer >= min_4mib_ns, "4 MiB transfer %.1f ns, below the model's %.1f ns", transfer, min_4mib_ns);
            fprintf(stderr, "mpi_p2p: rank 0 <-> rank %d: 0-byte one-way %.1f ns (model >= %.1f), 4 MiB %.1f ns (model >= %.1f)\n",
                    peer, one_way, min_one_way_ns, transfer, min_4mib_ns);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    rank = check_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double min_one_way_ns = -1.0, min_4mib_ns = -1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--min-one-way-ns") == 0) min_one_way_ns = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--min-4mib-ns") == 0) min_4mib_ns = atof(argv[i + 1]);
    }
    CHECK(size >= 2, "needs at least 2 ranks, got %d", size);
    if (size >= 2) {
        unsigned char* send = malloc(4 << 20);
        unsigned char* recv = malloc(4 << 20);
        ring_blocking(send, recv);
        free(send);
        free(recv);
        all_pairs_nonblocking();
        any_source_and_probe();
        tags_and_order();
        int peer = peer_on_other_node();
        if (peer > 0 && (min_one_way_ns >= 0 || min_4mib_ns >= 0)) timings(peer, min_one_way_ns, min_4mib_ns);
        if (rank == 0)
            printf("mpi_p2p: %d ranks, %zu sizes of 1 B to 4 MiB, %s\n", size, NSIZES,
                   peer > 0 ? "timed between two nodes" : "all ranks on one node");
    }
    return check_finish("mpi_p2p");
}
