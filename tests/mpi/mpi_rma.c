/* One-sided communication on windows of MPI_Win_create and MPI_Win_allocate: MPI_Put,
 * MPI_Get and MPI_Accumulate (MPI_SUM, MPI_REPLACE) in fence epochs, then under passive
 * target synchronisation (MPI_Win_lock shared and exclusive, MPI_Win_flush,
 * MPI_Win_lock_all), with small and large (1 MiB) transfers; the same with strided
 * (MPI_Type_vector) origin and target data; the atomics MPI_Fetch_and_op,
 * MPI_Compare_and_swap and MPI_Get_accumulate. Every element checked.
 *
 *   --no-accumulate   leave the accumulates and atomics out (the lock_all epoch then uses
 *                     MPI_Put)
 *   --no-atomics      leave the atomics out */
#include "mpi_check.h"

#define N 1024               /* ints per rank in the small window */
#define LARGE (1 << 18)      /* ints per rank in the large window (1 MiB) */
#define STRIDED_TARGET 256   /* ints, at most, of a transfer with a strided target */

static int rank, size;
static int accumulate = 1;
static int atomic_operations = 1;

static int expected_value(int owner, int writer, int i)
{
    return owner * 1000000 + writer * 10000 + i;
}

/* Fence epochs: every rank puts one slice into its right neighbour's window, gets one
 * from its left neighbour, and accumulates into rank 0. */
static void fences(MPI_Win win, int* base, int count)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int slice = count / 4;
    int* mine = malloc(sizeof(int) * (size_t)count);
    for (int i = 0; i < count; ++i) base[i] = -1;
    MPI_OK(MPI_Win_fence(0, win));

    /* Put: slice 0 of the right neighbour's window. */
    for (int i = 0; i < slice; ++i) mine[i] = expected_value(right, rank, i);
    MPI_OK(MPI_Put(mine, slice, MPI_INT, right, 0, slice, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i)
        CHECK(base[i] == expected_value(rank, left, i), "fence put [%d] = %d, expected %d", i, base[i],
              expected_value(rank, left, i));
    for (int i = slice; i < count; ++i) CHECK(base[i] == -1, "fence put wrote [%d] = %d", i, base[i]);

    /* Get: each rank fills slice 1 of its own window, then reads the left neighbour's. */
    for (int i = 0; i < slice; ++i) base[slice + i] = expected_value(rank, 99, i);
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i) mine[i] = 0;
    MPI_OK(MPI_Get(mine, slice, MPI_INT, left, slice, slice, MPI_INT, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i)
        CHECK(mine[i] == expected_value(left, 99, i), "fence get [%d] = %d, expected %d", i, mine[i],
              expected_value(left, 99, i));

    /* Accumulate (SUM) into slice 2 of rank 0 from every rank, twice. */
    if (!accumulate) {
        free(mine);
        return;
    }
    for (int i = 0; i < slice; ++i) base[2 * slice + i] = 7;
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i) mine[i] = rank + 1 + i;
    for (int repeat = 0; repeat < 2; ++repeat)
        MPI_OK(MPI_Accumulate(mine, slice, MPI_INT, 0, 2 * slice, slice, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_fence(0, win));
    if (rank == 0)
        for (int i = 0; i < slice; ++i) {
            int e = 7 + 2 * (size * (size + 1) / 2 + size * i);
            CHECK(base[2 * slice + i] == e, "fence accumulate [%d] = %d, expected %d", i, base[2 * slice + i], e);
        }
    MPI_OK(MPI_Win_fence(0, win));
    free(mine);
}

/* Passive target: exclusive-lock puts and gets on the last rank's window, a shared-lock
 * accumulate from everyone on rank 0, MPI_REPLACE, and lock_all with flushes. */
static void passive(MPI_Win win, int* base, int count)
{
    const int target = size - 1;
    const int slice = count / 4;
    int* mine = malloc(sizeof(int) * (size_t)count);
    for (int i = 0; i < count; ++i) base[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);

    /* Each rank writes its own part of slice 0 of the target under an exclusive lock,
     * reads it back in the same epoch after a flush. */
    const int part = slice / size;
    for (int i = 0; i < part; ++i) mine[i] = expected_value(target, rank, i);
    MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
    MPI_OK(MPI_Put(mine, part, MPI_INT, target, (MPI_Aint)rank * part, part, MPI_INT, win));
    MPI_OK(MPI_Win_flush(target, win));
    for (int i = 0; i < part; ++i) mine[part + i] = 0;
    MPI_OK(MPI_Get(mine + part, part, MPI_INT, target, (MPI_Aint)rank * part, part, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(target, win));
    for (int i = 0; i < part; ++i)
        CHECK(mine[part + i] == expected_value(target, rank, i), "lock get-after-put [%d] = %d", i, mine[part + i]);

    /* Shared lock: everyone accumulates into slice 1 of rank 0 (or puts its own part). */
    for (int i = 0; i < slice; ++i) mine[i] = 1 + (i % 5);
    MPI_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    if (accumulate)
        MPI_OK(MPI_Accumulate(mine, slice, MPI_INT, 0, slice, slice, MPI_INT, MPI_SUM, win));
    else
        MPI_OK(MPI_Put(mine + rank * part, part, MPI_INT, 0, slice + (MPI_Aint)rank * part, part, MPI_INT, win));
    MPI_OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);

    /* The target checks its window under its own lock. */
    if (rank == target) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        for (int r = 0; r < size; ++r)
            for (int i = 0; i < part; ++i)
                CHECK(base[r * part + i] == expected_value(target, r, i), "lock put from %d [%d] = %d", r, i,
                      base[r * part + i]);
        MPI_OK(MPI_Win_unlock(target, win));
    }
    if (rank == 0) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        for (int i = 0; i < (accumulate ? slice : part * size); ++i) {
            int e = (accumulate ? size : 1) * (1 + (i % 5));
            CHECK(base[slice + i] == e, "shared-lock %s [%d] = %d, expected %d", accumulate ? "accumulate" : "put", i,
                  base[slice + i], e);
        }
        MPI_OK(MPI_Win_unlock(0, win));
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* lock_all: MPI_REPLACE into slice 2 of the right neighbour, flush, get it back. */
    const int right = (rank + 1) % size;
    for (int i = 0; i < slice; ++i) mine[i] = expected_value(right, rank, i) + 5;
    MPI_OK(MPI_Win_lock_all(0, win));
    if (accumulate)
        MPI_OK(MPI_Accumulate(mine, slice, MPI_INT, right, 2 * slice, slice, MPI_INT, MPI_REPLACE, win));
    else
        MPI_OK(MPI_Put(mine, slice, MPI_INT, right, 2 * slice, slice, MPI_INT, win));
    MPI_OK(MPI_Win_flush_all(win));
    for (int i = 0; i < slice; ++i) mine[slice + i] = 0;
    MPI_OK(MPI_Get(mine + slice, slice, MPI_INT, right, 2 * slice, slice, MPI_INT, win));
    MPI_OK(MPI_Win_flush(right, win));
    MPI_OK(MPI_Win_unlock_all(win));
    for (int i = 0; i < slice; ++i)
        CHECK(mine[slice + i] == expected_value(right, rank, i) + 5, "lock_all replace/get [%d] = %d", i,
              mine[slice + i]);
    MPI_Barrier(MPI_COMM_WORLD);
    free(mine);
}

/* Non-contiguous data (every other int, MPI_Type_vector): at the origin of a put and a get
 * of half a slice, which osc/portals4 moves as one operation on an I/O vector; at the
 * target of a put, a get and an accumulate, which it cuts into one operation per int, so
 * those stay short (STRIDED_TARGET ints). */
static void strided(MPI_Win win, int* base, int count)
{
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const int slice = count / 4, half = slice / 2, few = half < STRIDED_TARGET ? half : STRIDED_TARGET;
    int* mine = malloc(sizeof(int) * (size_t)count);
    int* other = malloc(sizeof(int) * (size_t)count);
    MPI_Datatype every_other, few_even;
    MPI_OK(MPI_Type_vector(half, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    MPI_OK(MPI_Type_vector(few, 1, 2, MPI_INT, &few_even));
    MPI_OK(MPI_Type_commit(&few_even));
    for (int i = 0; i < count; ++i) base[i] = -1;
    MPI_OK(MPI_Win_fence(0, win));

    /* Puts into the right neighbour's slice 0: the even ints of a buffer to its first half,
     * then a few contiguous ints to the even ints of its second half. */
    for (int i = 0; i < slice; ++i) mine[i] = i % 2 ? -3 : expected_value(right, rank, i / 2);
    for (int i = 0; i < few; ++i) other[i] = expected_value(right, rank, half + i);
    MPI_OK(MPI_Put(mine, 1, every_other, right, 0, half, MPI_INT, win));
    MPI_OK(MPI_Put(other, few, MPI_INT, right, half, 1, few_even, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i) {
        int j = i - half;
        int e = i < half                  ? expected_value(rank, left, i)
                : j % 2 == 0 && j / 2 < few ? expected_value(rank, left, half + j / 2)
                                            : -1;
        CHECK(base[i] == e, "strided put [%d] = %d, expected %d", i, base[i], e);
    }

    /* Gets from the left neighbour's slice 1: its first half into the even ints of a
     * buffer, and a few of its odd ints into the even ints of another. */
    for (int i = 0; i < slice; ++i) base[slice + i] = expected_value(rank, 77, i);
    for (int i = 0; i < slice; ++i) mine[i] = other[i] = -2;
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Get(mine, 1, every_other, left, slice, half, MPI_INT, win));
    MPI_OK(MPI_Get(other, 1, few_even, left, slice + 1, 1, few_even, win));
    MPI_OK(MPI_Win_fence(0, win));
    for (int i = 0; i < slice; ++i) {
        int e = i % 2 ? -2 : expected_value(left, 77, i / 2);
        CHECK(mine[i] == e, "strided get [%d] = %d, expected %d", i, mine[i], e);
        e = i % 2 || i / 2 >= few ? -2 : expected_value(left, 77, i + 1);
        CHECK(other[i] == e, "strided-target get [%d] = %d, expected %d", i, other[i], e);
    }

    /* Accumulate (SUM) from every rank into a few even ints of rank 0's slice 2. */
    if (accumulate) {
        for (int i = 0; i < slice; ++i) base[2 * slice + i] = 7;
        MPI_OK(MPI_Win_fence(0, win));
        for (int i = 0; i < few; ++i) mine[i] = rank + 1 + i;
        MPI_OK(MPI_Accumulate(mine, few, MPI_INT, 0, 2 * slice, 1, few_even, MPI_SUM, win));
        MPI_OK(MPI_Win_fence(0, win));
        if (rank == 0)
            for (int i = 0; i < slice; ++i) {
                int e = i % 2 || i / 2 >= few ? 7 : 7 + size * (size + 1) / 2 + size * (i / 2);
                CHECK(base[2 * slice + i] == e, "strided accumulate [%d] = %d, expected %d", i, base[2 * slice + i],
                      e);
            }
    }
    MPI_OK(MPI_Win_fence(0, win));
    MPI_OK(MPI_Type_free(&every_other));
    MPI_OK(MPI_Type_free(&few_even));
    free(mine);
    free(other);
}

/* Atomics under lock_all, every rank on the same ints of rank 0's window: a counter that
 * MPI_Fetch_and_op adds rank + 1 to, a flag that MPI_Compare_and_swap lets exactly one rank
 * take, and ints that MPI_Get_accumulate adds 1 to. */
static void atomics(MPI_Win win, int* base, int count)
{
    const int counter = 3 * (count / 4), flag = counter + 1, added = counter + 2, ADDED = 8;
    if (rank == 0) {
        base[counter] = 0;
        base[flag] = -1;
        for (int i = 0; i < ADDED; ++i) base[added + i] = 0;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int increment = rank + 1, before = -1, mine = rank, unset = -1, found = -2, ones[ADDED], seen[ADDED];
    for (int i = 0; i < ADDED; ++i) ones[i] = 1;
    MPI_OK(MPI_Win_lock_all(0, win));
    MPI_OK(MPI_Fetch_and_op(&increment, &before, MPI_INT, 0, counter, MPI_SUM, win));
    MPI_OK(MPI_Compare_and_swap(&mine, &unset, &found, MPI_INT, 0, flag, win));
    MPI_OK(MPI_Get_accumulate(ones, ADDED, MPI_INT, seen, ADDED, MPI_INT, 0, added, ADDED, MPI_INT, MPI_SUM, win));
    MPI_OK(MPI_Win_flush(0, win));
    MPI_OK(MPI_Win_unlock_all(win));

    const int total = size * (size + 1) / 2;
    CHECK(before >= 0 && before <= total - increment, "fetch_and_op fetched %d (total %d)", before, total);
    for (int i = 0; i < ADDED; ++i)
        CHECK(seen[i] >= 0 && seen[i] < size, "get_accumulate fetched [%d] = %d", i, seen[i]);
    /* Each rank fetched another value: the fetched ones are 0 .. size - 1 in some order. */
    int winners = found == -1, all_winners = 0, seen_sum = 0;
    MPI_OK(MPI_Allreduce(&winners, &all_winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_OK(MPI_Allreduce(&seen[0], &seen_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(all_winners == 1, "compare_and_swap: %d ranks found the flag unset", all_winners);
    CHECK(seen_sum == size * (size - 1) / 2, "get_accumulate: fetched values add up to %d", seen_sum);
    if (rank == 0) {
        CHECK(base[counter] == total, "fetch_and_op counter = %d, expected %d", base[counter], total);
        CHECK(base[flag] >= 0 && base[flag] < size, "compare_and_swap flag = %d", base[flag]);
        for (int i = 0; i < ADDED; ++i)
            CHECK(base[added + i] == size, "get_accumulate [%d] = %d, expected %d", i, base[added + i], size);
    }
    int taken_by = rank == 0 ? base[flag] : -1;
    MPI_OK(MPI_Bcast(&taken_by, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK((found == -1) == (taken_by == rank), "compare_and_swap: rank %d found %d, the flag holds %d", rank, found,
          taken_by);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    rank = check_rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--no-accumulate") == 0) accumulate = 0;
        else if (strcmp(argv[i], "--no-atomics") == 0) atomic_operations = 0;

    /* MPI_Win_create over user memory, small and large. */
    for (int large = 0; large < 2; ++large) {
        int count = large ? LARGE : N;
        int* memory = malloc(sizeof(int) * (size_t)count);
        MPI_Win win;
        MPI_OK(MPI_Win_create(memory, (MPI_Aint)sizeof(int) * count, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                              &win));
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        fences(win, memory, count);
        passive(win, memory, count);
        strided(win, memory, count);
        if (accumulate && atomic_operations) atomics(win, memory, count);
        MPI_OK(MPI_Win_free(&win));
        free(memory);
    }

    /* MPI_Win_allocate. */
    int* memory = NULL;
    MPI_Win win;
    MPI_OK(MPI_Win_allocate((MPI_Aint)sizeof(int) * N, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &memory, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    fences(win, memory, N);
    passive(win, memory, N);
    strided(win, memory, N);
    if (accumulate && atomic_operations) atomics(win, memory, N);
    MPI_OK(MPI_Win_free(&win));

    if (rank == 0)
        printf("mpi_rma: %d ranks, Win_create (4 KiB, 1 MiB) and Win_allocate, fence and lock epochs, %s\n", size,
               !accumulate ? "put, get, strided" : atomic_operations ? "put, get, accumulate, strided, atomics"
                                                        : "put, get, accumulate, strided");
    return check_finish("mpi_rma");
}
