/* MPI on a thread other than main, as StarPU-MPI runs it: the main thread waits on a
 * condition variable while an "MPI" thread calls MPI_Init_thread, exchanges messages and
 * finalizes, and a worker thread spins without ever calling MPI. The main thread, which
 * the simulation follows, sleeps the whole time; the other threads' CPU time must not make
 * its rank hold simulated time (docs/time.md). Checks a ring exchange and an allreduce. */
#include <pthread.h>
#include <stdatomic.h>

#include "mpi_check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_changed = PTHREAD_COND_INITIALIZER;
static int done = 0;
static int status = 1;
static atomic_int stop_spinning = 0;

static void* spin(void* unused)
{
    (void)unused;
    volatile unsigned long turns = 0;
    while (!atomic_load(&stop_spinning)) ++turns;
    return NULL;
}

static void* mpi_thread(void* unused)
{
    (void)unused;
    int provided = 0, size = 0;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &check_rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided >= MPI_THREAD_SERIALIZED, "provided thread level %d", provided);

    enum { BYTES = 65536, TAG = 3 };
    unsigned char* out = malloc(BYTES);
    unsigned char* in = malloc(BYTES);
    const int right = (check_rank + 1) % size, left = (check_rank + size - 1) % size;
    fill(out, BYTES, check_rank, TAG);
    MPI_OK(MPI_Sendrecv(out, BYTES, MPI_BYTE, right, TAG, in, BYTES, MPI_BYTE, left, TAG, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    CHECK(mismatches(in, BYTES, left, TAG) == 0, "ring: %zu bytes from rank %d differ", mismatches(in, BYTES, left, TAG),
          left);
    int mine = check_rank + 1, sum = 0;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == size * (size + 1) / 2, "allreduce gave %d", sum);
    if (check_rank == 0) printf("mpi_init_thread: %d ranks, MPI on a thread of its own, main thread waiting\n", size);
    free(out);
    free(in);

    int result = check_finish("mpi_init_thread");
    pthread_mutex_lock(&lock);
    status = result;
    done = 1;
    pthread_cond_signal(&done_changed);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    pthread_t worker, mpi;
    pthread_create(&worker, NULL, spin, NULL);
    pthread_create(&mpi, NULL, mpi_thread, NULL);
    pthread_mutex_lock(&lock);
    while (!done) pthread_cond_wait(&done_changed, &lock);
    pthread_mutex_unlock(&lock);
    pthread_join(mpi, NULL);
    atomic_store(&stop_spinning, 1);
    pthread_join(worker, NULL);
    return status;
}
