/* MPI_Alltoall loop: every rank sends BYTES to every rank ROUNDS times; every block
 * received is checked (its first and last bytes name the sender and the round). Rank 0
 * prints its loop time as MPI_Wtime measures it (simulated time under a simulator).
 * Usage: mpi_alltoall [ROUNDS [BYTES]] (100 rounds of 1 MiB per peer by default) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char mark(int sender, int receiver, int round)
{
    return (unsigned char)(sender * 31 + receiver * 7 + round);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    long bytes = argc > 2 ? atol(argv[2]) : 1 << 20;
    if (rounds < 1 || bytes < 1 || bytes > (1 << 30)) {
        if (rank == 0) fprintf(stderr, "mpi_alltoall: needs ROUNDS >= 1, 1 <= BYTES <= 2^30\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned char *out = calloc((size_t)size, (size_t)bytes), *in = calloc((size_t)size, (size_t)bytes);
    if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 3);
    long errors = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        for (int peer = 0; peer < size; peer++)
            out[peer * bytes] = out[peer * bytes + bytes - 1] = mark(rank, peer, r);
        MPI_Alltoall(out, (int)bytes, MPI_BYTE, in, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        for (int peer = 0; peer < size; peer++)
            errors += in[peer * bytes] != mark(peer, rank, r) || in[peer * bytes + bytes - 1] != mark(peer, rank, r);
    }
    double elapsed = MPI_Wtime() - start;
    long total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_alltoall: %s: %d ranks, %d rounds of %ld bytes per peer, %ld wrong blocks, loop %.9f s, "
               "%.3f us per alltoall\n", total ? "FAILED" : "ok", size, rounds, bytes, total, elapsed,
               elapsed / rounds * 1e6);
    free(in);
    free(out);
    MPI_Finalize();
    return total ? 1 : 0;
}
