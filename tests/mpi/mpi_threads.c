/* MPI_THREAD_MULTIPLE: several threads of each rank communicate at once. Ranks 2k and
 * 2k+1 are partners; each rank runs THREADS threads, thread t exchanging ROUNDS messages
 * with its partner's thread t on its own duplicate of MPI_COMM_WORLD (sizes cycling from
 * 8 B to 256 KiB, past the eager limit), every byte checked. Under s4bxi the threads'
 * Portals calls take turns at the rank's channel (docs/usage.md).
 *
 * Then the threads' simulated time: the main thread times an 8-byte ping-pong with its
 * partner (osu_latency's one-way figure), and the THREADS threads time one each, all at
 * once, while the main thread waits in pthread_join (osu_latency_mt's situation): on 2
 * ranks (run on 2 nodes), each must see at most twice the main thread's figure
 * (docs/time.md "Threads"). With more ranks, two partners may share a node, whose NIC
 * serves the threads' messages one at a time as it serves several ranks' (two pairs of
 * ranks on one node: 1.41 us one way each, against 0.77 us for one pair): the times are
 * only checked to be positive there. */
#include <pthread.h>
#include <stdint.h>

#include "mpi_check.h"

#define THREADS 3
#define ROUNDS 40

#define TIMED_ROUNDS 100
#define WARMUP_ROUNDS 10

static MPI_Comm comms[THREADS];
static double thread_one_way_us[THREADS];
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

/* One-way time (µs, on the calling thread's MPI_Wtime) of an 8-byte ping-pong with the
 * partner on `comm`, as osu_latency measures it. */
static double one_way_us(MPI_Comm comm)
{
    char message[8] = {0};
    double start = 0.0;
    for (int round = 0; round < WARMUP_ROUNDS + TIMED_ROUNDS; ++round) {
        if (round == WARMUP_ROUNDS) start = MPI_Wtime();
        if (check_rank % 2 == 0) {
            MPI_OK(MPI_Send(message, 8, MPI_BYTE, partner, 1, comm));
            MPI_OK(MPI_Recv(message, 8, MPI_BYTE, partner, 2, comm, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv(message, 8, MPI_BYTE, partner, 1, comm, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Send(message, 8, MPI_BYTE, partner, 2, comm));
        }
    }
    return (MPI_Wtime() - start) * 1e6 / (2.0 * TIMED_ROUNDS);
}

static void* timed_exchange(void* arg)
{
    int t = (int)(intptr_t)arg;
    thread_one_way_us[t] = one_way_us(comms[t]);
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

        double main_one_way = one_way_us(MPI_COMM_WORLD);
        for (intptr_t t = 0; t < THREADS; ++t) pthread_create(&threads[t], NULL, timed_exchange, (void*)t);
        for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
        CHECK(main_one_way > 0.0, "the main thread's ping-pong took %.3f us one way", main_one_way);
        for (int t = 0; t < THREADS; ++t)
            CHECK(thread_one_way_us[t] > 0.0 && (size > 2 || thread_one_way_us[t] <= 2.0 * main_one_way),
                  "thread %d: 8 B one way in %.3f us, beside %.3f us on the main thread (at most twice)", t,
                  thread_one_way_us[t], main_one_way);
    }
    for (int t = 0; t < THREADS; ++t) MPI_Comm_free(&comms[t]);
    return check_finish("mpi_threads");
}
