/* Weak scaling of a rank's own work: every rank does the same compute-bound loop (FLOPS
 * million multiply-adds on eight independent chains, in registers) and the same SWEEPS
 * passes over a buffer of MIB MiB of its own (each pass reads and writes every double),
 * then the ranks sum a checksum with MPI_Allreduce. Each rank prints the time of its
 * compute and of its sweeps as MPI_Wtime measures them (simulated time under a simulator):
 * with more ranks, the same work should take the same time.
 * Usage: weak_scaling [FLOPS [SWEEPS [MIB]]] (default 200 million, 4 passes, 32 MiB) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long flops = (argc > 1 ? atol(argv[1]) : 200) * 1000000L;
    int sweeps = argc > 2 ? atoi(argv[2]) : 4;
    long mib = argc > 3 ? atol(argv[3]) : 32;
    size_t count = (size_t)mib * 1024 * 1024 / sizeof(double);
    double *buffer = malloc(count * sizeof(double));
    if (flops < 0 || sweeps < 0 || mib < 1 || !buffer) {
        if (rank == 0)
            fprintf(stderr, "weak_scaling: FLOPS >= 0, SWEEPS >= 0, MIB >= 1 (and the memory for it)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t i = 0; i < count; i++) /* touched before the clock starts: no page faults timed */
        buffer[i] = (double)(i % 1000) * 1e-3;
    MPI_Barrier(MPI_COMM_WORLD);

    double start = MPI_Wtime();
    double chain[8];
    for (int c = 0; c < 8; c++)
        chain[c] = 1.0 + rank * 1e-9 + c * 1e-3;
    for (long i = 0; i < flops / 8; i++)
        for (int c = 0; c < 8; c++)
            chain[c] = chain[c] * 0.999999999 + 1e-9;
    double compute = MPI_Wtime() - start;

    start = MPI_Wtime();
    double sum = 0;
    for (int s = 0; s < sweeps; s++)
        for (size_t i = 0; i < count; i++) {
            sum += buffer[i];
            buffer[i] = buffer[i] * 0.5 + 1.0;
        }
    double sweep = MPI_Wtime() - start;

    double local = sum, total = 0;
    for (int c = 0; c < 8; c++)
        local += chain[c];
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    printf("weak_scaling: rank %d of %d: compute %.9f s, sweep %.9f s (%ld M flops, %d x %ld MiB, checksum %.6e)\n",
           rank, size, compute, sweep, flops / 1000000L, sweeps, mib, total);
    free(buffer);
    MPI_Finalize();
    return 0;
}
