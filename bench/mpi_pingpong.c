/* MPI ping-pong: ranks 2k and 2k+1 exchange a SIZE-byte message ROUNDS times (needs an
 * even number of ranks); every byte received is checked, unless CHECK is 0: then the
 * payload is not touched (as bench/message_rate.c does), so that the program's own work
 * stays out of a simulator's wall time. Rank 0 prints its loop time as MPI_Wtime measures
 * it (simulated time under a simulator).
 * Usage: mpi_pingpong [ROUNDS [SIZE [CHECK]]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(int round, int sender, int i)
{
    return (unsigned char)(round * 31 + sender * 7 + i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    int bytes = argc > 2 ? atoi(argv[2]) : 8;
    int checked = argc > 3 ? atoi(argv[3]) : 1;
    if (size % 2 != 0 || rounds < 1 || bytes < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: needs an even number of ranks, ROUNDS >= 1, SIZE >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = rank ^ 1, errors = 0;
    unsigned char *buf = calloc(bytes, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        for (int turn = 0; turn < 2; turn++) {
            if ((rank % 2) == turn) { /* even ranks send first, odd ranks answer */
                for (int i = 0; checked && i < bytes; i++)
                    buf[i] = pattern(r, rank, i);
                MPI_Send(buf, bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; checked && i < bytes; i++)
                    errors += buf[i] != pattern(r, peer, i);
            }
        }
    }
    double elapsed = MPI_Wtime() - start;
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_pingpong: %s: %d ranks, %d rounds of %d B, %d wrong bytes%s, loop %.9f s, "
               "%.3f us per round trip\n", total ? "FAILED" : "ok", size, rounds, bytes, total,
               checked ? "" : " (not checked)", elapsed, elapsed / rounds * 1e6);
    free(buf);
    MPI_Finalize();
    return total ? 1 : 0;
}
