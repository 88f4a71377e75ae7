/* Shared by the MPI test programs of this folder: failure counting, data patterns and the
 * final verdict. Each program checks its own results; rank 0 prints "<name>: ok" when no
 * rank saw a failure (run_mpi.py looks for that line) and every rank exits 0, otherwise
 * every rank exits 1. Only rank 0 prints to stdout, and only values that do not depend on
 * timing, so that two runs under --cpu-model zero print the same bytes. */
#ifndef S4BXI_MPI_CHECK_H
#define S4BXI_MPI_CHECK_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int check_failures = 0;
static int check_rank = -1;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            if (check_failures < 20) {                                        \
                fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", check_rank, \
                        __FILE__, __LINE__, #cond);                           \
                fprintf(stderr, __VA_ARGS__);                                 \
                fputc('\n', stderr);                                          \
            }                                                                 \
            ++check_failures;                                                 \
        }                                                                     \
    } while (0)

#define MPI_OK(call)                                                          \
    do {                                                                      \
        int rc_ = (call);                                                     \
        CHECK(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);              \
    } while (0)

/* The byte at `index` of a message from `source` with `tag`: differs between messages,
 * senders and positions, so that a misplaced or stale byte shows. */
static inline unsigned char pattern(int source, int tag, size_t index)
{
    return (unsigned char)((index * 131u) ^ ((unsigned)source * 29u) ^ ((unsigned)tag * 7u) ^ (index >> 8));
}

static inline void fill(unsigned char* buffer, size_t size, int source, int tag)
{
    for (size_t i = 0; i < size; ++i) buffer[i] = pattern(source, tag, i);
}

/* Number of bytes that differ from the pattern (0 when the message is intact). */
static inline size_t mismatches(const unsigned char* buffer, size_t size, int source, int tag)
{
    size_t bad = 0;
    for (size_t i = 0; i < size; ++i) bad += buffer[i] != pattern(source, tag, i);
    return bad;
}

/* The calling thread's CLOCK_MONOTONIC in ns: on a rank, simulated time. */
static inline long long monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void check_init(int* argc, char*** argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &check_rank);
    /* Report errors instead of aborting, so that CHECK sees them. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* Gathers the verdict of every rank, prints it on rank 0, finalizes; returns the exit
 * status. */
static inline int check_finish(const char* name)
{
    int total = 0;
    MPI_Allreduce(&check_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (check_rank == 0) {
        if (total == 0)
            printf("%s: ok\n", name);
        else
            printf("%s: FAILED (%d failed checks)\n", name, total);
        fflush(stdout);
    }
    MPI_Finalize();
    return total == 0 ? 0 : 1;
}

#endif
