/* Allreduce of the ranks, across machines: rank 0 prints the sum and where each rank ran
 * ("sum 3 of 3 ranks on m0 m1 m2"), check_machines.py compares. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, sum, length;
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &length);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char *names = rank == 0 ? calloc((size_t)size, MPI_MAX_PROCESSOR_NAME) : NULL;
    MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("sum %d of %d ranks on", sum, size);
        for (int i = 0; i < size; i++)
            printf(" %s", names + (size_t)i * MPI_MAX_PROCESSOR_NAME);
        printf("\n");
        free(names);
    }
    MPI_Finalize();
    return 0;
}
