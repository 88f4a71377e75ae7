/* MPI_THREAD_MULTIPLE: several threads of each rank communicate at once. Ranks 2k and
 * 2k+1 are partners; each rank runs THREADS threads, thread t exchanging ROUNDS messages
 * with its partner's thread t on its own duplicate of MPI_COMM_WORLD (sizes cycling from
 * 8 B to 256 KiB, past the eager limit), every byte checked. Under s4bxi the threads'
 * Portals calls take turns at the rank's channel (docs/usage.md). */
#include <pthread.h>
#include <stdint.h>

#include "mpi_check.h"

#define THREADS 3
#define ROUNDS 40

static MPI_Comm comms[THREADS];
static int partner;
static int thread_failures;

static void* exchange(void* arg)
{
    int t = (int)(intptr_t)arg;
    static const size_t sizes[] = {8, 1024, 16384, 262144};
    unsigned char* out = malloc(262144);
    unsigned char* in = malloc(262144);
    int failures = 0;
    for (int round = 0; round < ROUNDS; ++round) {
        size_t size = sizes[(round + t) % 4];
        int tag = round * THREADS + t;
        fill(out, size, check_rank, tag);
        MPI_Status status;
        int rc = MPI_Sendrecv(out, (int)size, MPI_BYTE, partner, tag, in, (int)size, MPI_BYTE, partner, tag, comms[t],
                              &status);
        if (rc != MPI_SUCCESS || mismatches(in, size, partner, tag) != 0) ++failures;
    }
    free(out);
    free(in);
    __atomic_add_fetch(&thread_failures, failures, __ATOMIC_SEQ_CST);
    return NULL;
}

int main(int argc, char** argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &check_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_Init_thread provided %d", provided);
    CHECK(size % 2 == 0, "an even number of ranks is needed, not %d", size);
    partner = check_rank ^ 1;
    for (int t = 0; t < THREADS; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    if (provided == MPI_THREAD_MULTIPLE && size % 2 == 0) {
        pthread_t threads[THREADS];
        for (intptr_t t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, exchange, (void*)t);
        for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
        CHECK(thread_failures == 0, "%d exchanges failed or carried wrong bytes", thread_failures);
    }
    for (int t = 0; t < THREADS; ++t) MPI_Comm_free(&comms[t]);
    return check_finish("mpi_threads");
}
