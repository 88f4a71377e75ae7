/* MPI_Abort's error code is the run's exit status: rank 3 aborts with code 5 while the
 * other ranks wait in MPI_Barrier (or, with argument "compute", compute first). mpirun
 * stops the other ranks and exits with 5; the simulation server, seeing ranks end before
 * finishing, reports the failure too, and whichever of the two the launcher hears of
 * first, its status must be mpirun's. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 3) {
        fprintf(stderr, "rank 3 aborting with code 5\n");
        MPI_Abort(MPI_COMM_WORLD, 5);
    }
    if (argc > 1 && strcmp(argv[1], "compute") == 0) {
        volatile double x = 0;
        for (long i = 0; i < 100000000L; ++i) x += 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
