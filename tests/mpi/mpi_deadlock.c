/* A deadlock for the simulation to report: rank 1 waits in MPI_Recv for a message rank 0
 * never sends, while rank 0 waits in MPI_Finalize's PMIx fence for rank 1. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank, value = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) MPI_Recv(&value, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("mpi_deadlock: rank %d reached MPI_Finalize\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
