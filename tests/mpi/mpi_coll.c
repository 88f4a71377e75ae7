/* Collectives on MPI_COMM_WORLD and on a communicator split by rank parity, with MPI_INT,
 * MPI_LONG and MPI_DOUBLE (or those named by --types, e.g. --types MPI_INT,MPI_DOUBLE): Barrier, Bcast (small and large), Reduce, Allreduce (SUM, MAX,
 * MIN, PROD), Scan, Exscan, Gather, Gatherv, Scatter, Allgather, Alltoall,
 * Reduce_scatter_block, and the non-blocking Ibarrier, Ibcast, Iallreduce. Every result is
 * checked against what it must be; doubles carry integer values, so sums are exact.
 * --no-nonblocking leaves the non-blocking collectives out. */
#include "mpi_check.h"

#define COUNT 37          /* elements per rank in the vector operations */
static int nonblocking = 1; /* --no-nonblocking leaves Ibarrier, Ibcast, Iallreduce out */
#define BIG (256 * 1024)  /* elements of the large broadcast */

/* The value rank r contributes at index i. */
static long long value(int r, int i)
{
    return (long long)(r + 1) * 1000 + i * 3 - (r % 3);
}

/* One datatype: reads and writes elements of buffers of that type as long long. */
struct type {
    MPI_Datatype mpi;
    const char* name;
    size_t size;
};

static void put(const struct type* t, void* buffer, int i, long long v)
{
    if (t->mpi == MPI_INT) ((int*)buffer)[i] = (int)v;
    else if (t->mpi == MPI_LONG) ((long*)buffer)[i] = (long)v;
    else ((double*)buffer)[i] = (double)v;
}

static long long get(const struct type* t, const void* buffer, int i)
{
    if (t->mpi == MPI_INT) return ((const int*)buffer)[i];
    if (t->mpi == MPI_LONG) return ((const long*)buffer)[i];
    return (long long)((const double*)buffer)[i];
}

static void* make(const struct type* t, size_t count)
{
    return calloc(count ? count : 1, t->size);
}

static void collectives(MPI_Comm comm, const char* comm_name, const struct type* t)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size < 1) return;
    const char* tn = t->name;
    MPI_OK(MPI_Barrier(comm));

    /* Bcast from each root, then a large one from the last rank. */
    void* buffer = make(t, COUNT);
    for (int root = 0; root < size; ++root) {
        for (int i = 0; i < COUNT; ++i) put(t, buffer, i, rank == root ? value(root, i) : -1);
        MPI_OK(MPI_Bcast(buffer, COUNT, t->mpi, root, comm));
        for (int i = 0; i < COUNT; ++i)
            CHECK(get(t, buffer, i) == value(root, i), "%s %s Bcast root %d [%d] = %lld", comm_name, tn, root, i,
                  get(t, buffer, i));
    }
    free(buffer);
    void* big = make(t, BIG);
    for (int i = 0; i < BIG; ++i) put(t, big, i, rank == size - 1 ? value(size - 1, i % 5000) : 0);
    MPI_OK(MPI_Bcast(big, BIG, t->mpi, size - 1, comm));
    int bad = 0;
    for (int i = 0; i < BIG; ++i) bad += get(t, big, i) != value(size - 1, i % 5000);
    CHECK(bad == 0, "%s %s large Bcast: %d wrong elements", comm_name, tn, bad);
    free(big);

    /* Reductions. */
    void* in = make(t, COUNT);
    void* out = make(t, COUNT);
    for (int i = 0; i < COUNT; ++i) put(t, in, i, value(rank, i));
    struct {
        MPI_Op op;
        const char* name;
    } ops[] = {{MPI_SUM, "SUM"}, {MPI_MAX, "MAX"}, {MPI_MIN, "MIN"}, {MPI_PROD, "PROD"}};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
        long long expected[COUNT];
        for (int i = 0; i < COUNT; ++i) {
            long long e = ops[o].op == MPI_PROD ? 1 : value(0, i);
            for (int r = ops[o].op == MPI_PROD ? 0 : 1; r < size; ++r) {
                long long v = ops[o].op == MPI_PROD ? (r % 2 ? 2 : 1) + (i % 2) : value(r, i);
                if (ops[o].op == MPI_SUM) e += v;
                else if (ops[o].op == MPI_MAX) e = v > e ? v : e;
                else if (ops[o].op == MPI_MIN) e = v < e ? v : e;
                else e *= v;
            }
            expected[i] = e;
        }
        if (ops[o].op == MPI_PROD)  /* small factors: no overflow in any type */
            for (int i = 0; i < COUNT; ++i) put(t, in, i, (rank % 2 ? 2 : 1) + (i % 2));
        for (int root = 0; root < size; root += size - 1 > 0 ? size - 1 : 1) {
            for (int i = 0; i < COUNT; ++i) put(t, out, i, -7);
            MPI_OK(MPI_Reduce(in, out, COUNT, t->mpi, ops[o].op, root, comm));
            if (rank == root)
                for (int i = 0; i < COUNT; ++i)
                    CHECK(get(t, out, i) == expected[i], "%s %s Reduce %s root %d [%d] = %lld, expected %lld",
                          comm_name, tn, ops[o].name, root, i, get(t, out, i), expected[i]);
        }
        for (int i = 0; i < COUNT; ++i) put(t, out, i, -7);
        MPI_OK(MPI_Allreduce(in, out, COUNT, t->mpi, ops[o].op, comm));
        for (int i = 0; i < COUNT; ++i)
            CHECK(get(t, out, i) == expected[i], "%s %s Allreduce %s [%d] = %lld, expected %lld", comm_name, tn,
                  ops[o].name, i, get(t, out, i), expected[i]);
        /* In place. */
        for (int i = 0; i < COUNT; ++i) put(t, out, i, get(t, in, i));
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, out, COUNT, t->mpi, ops[o].op, comm));
        for (int i = 0; i < COUNT; ++i)
            CHECK(get(t, out, i) == expected[i], "%s %s Allreduce in place %s [%d] = %lld, expected %lld", comm_name,
                  tn, ops[o].name, i, get(t, out, i), expected[i]);
        if (ops[o].op == MPI_PROD)
            for (int i = 0; i < COUNT; ++i) put(t, in, i, value(rank, i));
    }

    /* Scan and Exscan (SUM). */
    MPI_OK(MPI_Scan(in, out, COUNT, t->mpi, MPI_SUM, comm));
    for (int i = 0; i < COUNT; ++i) {
        long long e = 0;
        for (int r = 0; r <= rank; ++r) e += value(r, i);
        CHECK(get(t, out, i) == e, "%s %s Scan [%d] = %lld, expected %lld", comm_name, tn, i, get(t, out, i), e);
    }
    MPI_OK(MPI_Exscan(in, out, COUNT, t->mpi, MPI_SUM, comm));
    if (rank > 0)
        for (int i = 0; i < COUNT; ++i) {
            long long e = 0;
            for (int r = 0; r < rank; ++r) e += value(r, i);
            CHECK(get(t, out, i) == e, "%s %s Exscan [%d] = %lld, expected %lld", comm_name, tn, i, get(t, out, i), e);
        }

    /* Gather, Gatherv, Scatter, Allgather, Alltoall, Reduce_scatter_block. */
    void* all = make(t, (size_t)COUNT * size);
    const int root = size / 2;
    MPI_OK(MPI_Gather(in, COUNT, t->mpi, all, COUNT, t->mpi, root, comm));
    if (rank == root)
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < COUNT; ++i)
                CHECK(get(t, all, r * COUNT + i) == value(r, i), "%s %s Gather from %d [%d]", comm_name, tn, r, i);
    const size_t nranks = size > 0 ? (size_t)(unsigned)size : 1;
    int* counts = calloc(nranks, sizeof *counts);
    int* displs = calloc(nranks, sizeof *displs);
    for (int r = 0, d = 0; r < size; ++r) {
        counts[r] = 1 + (r * 7) % COUNT;
        displs[r] = d;
        d += counts[r];
    }
    for (int i = 0; i < COUNT * size; ++i) put(t, all, i, -1);
    MPI_OK(MPI_Gatherv(in, counts[rank], t->mpi, all, counts, displs, t->mpi, 0, comm));
    if (rank == 0)
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < counts[r]; ++i)
                CHECK(get(t, all, displs[r] + i) == value(r, i), "%s %s Gatherv from %d [%d]", comm_name, tn, r, i);
    for (int r = 0; r < size; ++r)
        for (int i = 0; i < COUNT; ++i) put(t, all, r * COUNT + i, rank == root ? value(r, i) * 2 : 0);
    MPI_OK(MPI_Scatter(all, COUNT, t->mpi, out, COUNT, t->mpi, root, comm));
    for (int i = 0; i < COUNT; ++i)
        CHECK(get(t, out, i) == value(rank, i) * 2, "%s %s Scatter [%d]", comm_name, tn, i);
    MPI_OK(MPI_Allgather(in, COUNT, t->mpi, all, COUNT, t->mpi, comm));
    for (int r = 0; r < size; ++r)
        for (int i = 0; i < COUNT; ++i)
            CHECK(get(t, all, r * COUNT + i) == value(r, i), "%s %s Allgather from %d [%d]", comm_name, tn, r, i);
    /* Alltoall: block j of rank r goes to rank j. */
    void* sendall = make(t, (size_t)COUNT * size);
    for (int j = 0; j < size; ++j)
        for (int i = 0; i < COUNT; ++i) put(t, sendall, j * COUNT + i, value(rank, i) * 10 + j);
    MPI_OK(MPI_Alltoall(sendall, COUNT, t->mpi, all, COUNT, t->mpi, comm));
    for (int r = 0; r < size; ++r)
        for (int i = 0; i < COUNT; ++i)
            CHECK(get(t, all, r * COUNT + i) == value(r, i) * 10 + rank, "%s %s Alltoall from %d [%d]", comm_name,
                  tn, r, i);
    /* Reduce_scatter_block: rank r gets the sum over ranks of their block r. */
    MPI_OK(MPI_Reduce_scatter_block(sendall, out, COUNT, t->mpi, MPI_SUM, comm));
    for (int i = 0; i < COUNT; ++i) {
        long long e = 0;
        for (int r = 0; r < size; ++r) e += value(r, i) * 10 + rank;
        CHECK(get(t, out, i) == e, "%s %s Reduce_scatter_block [%d] = %lld, expected %lld", comm_name, tn, i,
              get(t, out, i), e);
    }

    /* Non-blocking: Ibarrier, Ibcast and Iallreduce in flight together. */
    if (!nonblocking) {
        free(sendall);
        free(counts);
        free(displs);
        free(all);
        free(in);
        free(out);
        return;
    }
    MPI_Request requests[3];
    void* nb = make(t, COUNT);
    for (int i = 0; i < COUNT; ++i) put(t, nb, i, rank == 0 ? value(0, i) + 5 : 0);
    MPI_OK(MPI_Ibarrier(comm, &requests[0]));
    MPI_OK(MPI_Ibcast(nb, COUNT, t->mpi, 0, comm, &requests[1]));
    MPI_OK(MPI_Iallreduce(in, out, COUNT, t->mpi, MPI_SUM, comm, &requests[2]));
    MPI_OK(MPI_Waitall(3, requests, MPI_STATUSES_IGNORE));
    for (int i = 0; i < COUNT; ++i) {
        long long e = 0;
        for (int r = 0; r < size; ++r) e += value(r, i);
        CHECK(get(t, nb, i) == value(0, i) + 5, "%s %s Ibcast [%d]", comm_name, tn, i);
        CHECK(get(t, out, i) == e, "%s %s Iallreduce [%d] = %lld, expected %lld", comm_name, tn, i, get(t, out, i), e);
    }

    free(nb);
    free(sendall);
    free(counts);
    free(displs);
    free(all);
    free(in);
    free(out);
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const struct type types[] = {
        {MPI_INT, "MPI_INT", sizeof(int)},
        {MPI_LONG, "MPI_LONG", sizeof(long)},
        {MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)},
    };
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, check_rank % 2, -check_rank, &half);  /* reversed order */
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    int half_rank, half_size;
    MPI_Comm_rank(half, &half_rank);
    MPI_Comm_size(half, &half_size);
    CHECK(half_size == (size + (check_rank % 2 ? 0 : 1)) / 2, "split size %d", half_size);
    CHECK(half_rank == (half_size - 1) - check_rank / 2, "split rank %d", half_rank);
    /* --types MPI_INT,MPI_DOUBLE limits the datatypes (all three by default). */
    const char* only = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--types") == 0 && i + 1 < argc) only = argv[i + 1];
        if (strcmp(argv[i], "--no-nonblocking") == 0) nonblocking = 0;
    }
    char tested[64] = "";
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        if (only && !strstr(only, types[t].name)) continue;
        collectives(MPI_COMM_WORLD, "world", &types[t]);
        collectives(half, "split", &types[t]);
        strcat(tested, " ");
        strcat(tested, types[t].name);
    }
    MPI_Comm_free(&half);
    if (check_rank == 0)
        printf("mpi_coll: %d ranks, world and split communicators,%s%s\n", size, tested,
               nonblocking ? ", blocking and non-blocking" : ", blocking only");
    return check_finish("mpi_coll");
}
