/* A blocked MPI_Recv: rank 1 starts its clock and tells rank 0 to go; rank 0 sleeps
 * SECONDS (nanosleep), then sends 8 bytes; rank 1 waits in MPI_Recv meanwhile. Rank 1
 * prints how long it waited as MPI_Wtime measures it (simulated time under a simulator)
 * and checks the data, and that it waited at least SECONDS (its clock started before rank
 * 0's sleep; after a barrier, the ranks would leave at slightly different dates).
 * Two ranks exactly.
 * Usage: mpi_blocked_recv SECONDS */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = argc > 1 ? atof(argv[1]) : 0.01;
    if (size != 2 || seconds < 0) {
        if (rank == 0)
            fprintf(stderr, "mpi_blocked_recv: needs 2 ranks and SECONDS >= 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long value = 0;
    int ok = 1;
    double start = MPI_Wtime();
    if (rank == 0) {
        MPI_Recv(&value, 1, MPI_LONG, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
        nanosleep(&pause, NULL);
        value = 0x5eed;
        MPI_Send(&value, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
    } else {
        MPI_Send(&value, 1, MPI_LONG, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(&value, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double waited = MPI_Wtime() - start;
        ok = value == 0x5eed && waited >= seconds;
        printf("mpi_blocked_recv: %s: sleep %.6f s, MPI_Recv waited %.9f s\n",
               ok ? "ok" : "FAILED", seconds, waited);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
