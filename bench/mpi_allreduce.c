/* MPI_Allreduce loop: every rank adds COUNT ints ROUNDS times; every result is checked
 * against the closed-form sum. Rank 0 prints its loop time as MPI_Wtime measures it
 * (simulated time under a simulator).
 * Usage: mpi_allreduce [ROUNDS [COUNT]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    int count = argc > 2 ? atoi(argv[2]) : 16;
    if (rounds < 1 || count < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_allreduce: needs ROUNDS >= 1, COUNT >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *in = malloc(count * sizeof *in), *out = malloc(count * sizeof *out), errors = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < count; i++)
            in[i] = rank + r + i; /* sum over ranks: size*(size-1)/2 + size*(r+i) */
        MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            errors += out[i] != size * (size - 1) / 2 + size * (r + i);
    }
    double elapsed = MPI_Wtime() - start;
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_allreduce: %s: %d ranks, %d rounds of %d ints, %d wrong sums, loop %.9f s, "
               "%.3f us per allreduce\n", total ? "FAILED" : "ok", size, rounds, count, total,
               elapsed, elapsed / rounds * 1e6);
    free(in);
    free(out);
    MPI_Finalize();
    return total ? 1 : 0;
}
