/* The cost of one MPI_Test that finds nothing to complete. Two ranks: rank 0 posts an
 * MPI_Irecv from rank 1, calls MPI_Test on it CALLS times, reading MPI_Wtime before and
 * after (simulated time under a simulator), then tells rank 1 to go; rank 1 waits in
 * MPI_Recv for that word and only then sends the message rank 0's receive waits for, so
 * the receive cannot complete during the tests. Rank 0 prints the time per MPI_Test.
 * Usage: mpi_test_cost [CALLS] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long calls = argc > 1 ? atol(argv[1]) : 10000;
    if (size != 2 || calls < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_test_cost: needs 2 ranks and CALLS >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long message = 0, go = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Request request;
        MPI_Irecv(&message, 1, MPI_LONG, 1, 7, MPI_COMM_WORLD, &request);
        long completed_early = 0;
        double start = MPI_Wtime();
        for (long i = 0; i < calls; i++) {
            int flag = 0;
            MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
            if (flag) { /* cannot happen: rank 1 sends only once told to */
                completed_early = i + 1;
                break;
            }
        }
        double elapsed = MPI_Wtime() - start;
        MPI_Send(&go, 1, MPI_LONG, 1, 6, MPI_COMM_WORLD);
        if (!completed_early)
            MPI_Wait(&request, MPI_STATUS_IGNORE);
        int ok = !completed_early && message == 42;
        printf("mpi_test_cost: %s: %ld MPI_Test calls in %.9f s, %.3f ns per call\n", ok ? "ok" : "FAILED",
               calls, elapsed, elapsed / calls * 1e9);
        MPI_Finalize();
        return ok ? 0 : 1;
    }
    MPI_Recv(&go, 1, MPI_LONG, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    message = 42;
    MPI_Send(&message, 1, MPI_LONG, 0, 7, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
