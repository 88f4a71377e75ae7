/* Both ranks send at once, as IMB's PingPing does: each iteration is MPI_Isend to the
 * other rank, MPI_Recv from it, MPI_Wait on the send. Rank 1 starts SKEW_NS later (a
 * simulated sleep), so that the ranks run out of step and one rank's message lands
 * unexpected. Prints each rank's time per iteration, in microseconds.
 *
 * usage: mpi_pingping SIZE ITERATIONS SKEW_NS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: mpi_pingping SIZE ITERATIONS SKEW_NS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = atoi(argv[1]), iterations = atoi(argv[2]);
    long skew = atol(argv[3]);
    char* out = calloc(1, (size_t)size + 1);
    char* in = calloc(1, (size_t)size + 1);
    int other = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1 && skew > 0) {
        struct timespec pause = {skew / 1000000000L, skew % 1000000000L};
        nanosleep(&pause, NULL);
    }
    double start = MPI_Wtime();
    for (int i = 0; i < iterations; i++) {
        MPI_Request send;
        MPI_Isend(out, size, MPI_CHAR, other, 1, MPI_COMM_WORLD, &send);
        MPI_Recv(in, size, MPI_CHAR, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
    double per_iteration = (MPI_Wtime() - start) / iterations;
    printf("rank %d: %.4f us per iteration\n", rank, per_iteration * 1e6);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
