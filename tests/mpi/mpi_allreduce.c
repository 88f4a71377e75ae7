/* A 4-rank MPI_Allreduce loop with a little computation between the calls: the program
 * the observation tests draw (check_observation.py). Usage: mpi_allreduce [ROUNDS [COUNT]]. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20;
    int count = argc > 2 ? atoi(argv[2]) : 1024;
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double* in = malloc(sizeof(double) * (size_t)count);
    double* out = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; ++i) in[i] = rank + i;
    for (int round = 0; round < rounds; ++round) {
        for (int i = 0; i < count; ++i) in[i] = in[i] * 0.5 + round;  /* computation */
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_allreduce: %d rounds of %d doubles on %d ranks: ok\n", rounds, count, size);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
