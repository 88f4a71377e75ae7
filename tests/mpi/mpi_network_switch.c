/* Two phases of MPI_Alltoallv rounds of mixed sizes (0 B to 70 KB: Open MPI's short, eager
 * and rendezvous protocols at once), every byte checked, for runs that switch network
 * models (docs/model.md "Switching network models"): a switch at a date falls among
 * messages in flight, and one at MPI_Pcontrol separates the phases.
 *
 * usage: mpi_network_switch ROUNDS_A ROUNDS_B [none|pcontrol|pcontrol-rank0]
 *   pcontrol: every rank calls MPI_Pcontrol(0) before phase A, MPI_Pcontrol(1) before B;
 *   pcontrol-rank0: only rank 0 does.
 * Rank 0 prints each phase's simulated time ("phase A: ... s"), between barriers. */
#include "mpi_check.h"

static const size_t kSizes[] = {0, 8, 200, 4096, 20000, 70000};

static size_t size_of(int source, int destination, int round)
{
    return kSizes[(unsigned)(source * 7 + destination * 3 + round) % (sizeof kSizes / sizeof kSizes[0])];
}

static void round_of_alltoallv(int rank, int ranks, int round, unsigned char* send, unsigned char* receive, int* counts,
                               int* displacements, int* receive_counts, int* receive_displacements)
{
    int sent = 0, received = 0;
    for (int peer = 0; peer < ranks; ++peer) {
        counts[peer] = (int)size_of(rank, peer, round);
        displacements[peer] = sent;
        /* The tag of the pattern names the round and the destination: a byte delivered to
         * the wrong rank or from an older round shows. */
        fill(send + sent, (size_t)counts[peer], rank, round * 1000 + peer);
        sent += counts[peer];
        receive_counts[peer] = (int)size_of(peer, rank, round);
        receive_displacements[peer] = received;
        received += receive_counts[peer];
    }
    memset(receive, 0, (size_t)received);
    MPI_OK(MPI_Alltoallv(send, counts, displacements, MPI_BYTE, receive, receive_counts, receive_displacements,
                         MPI_BYTE, MPI_COMM_WORLD));
    for (int peer = 0; peer < ranks; ++peer) {
        size_t bad = mismatches(receive + receive_displacements[peer], (size_t)receive_counts[peer], peer,
                                round * 1000 + rank);
        CHECK(bad == 0, "round %d: %zu of %d bytes from rank %d wrong", round, bad, receive_counts[peer], peer);
    }
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    int rank, ranks;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rounds_a = argc > 1 ? atoi(argv[1]) : 20;
    int rounds_b = argc > 2 ? atoi(argv[2]) : 20;
    const char* mode = argc > 3 ? argv[3] : "none";
    int pcontrol = strcmp(mode, "pcontrol") == 0 || (strcmp(mode, "pcontrol-rank0") == 0 && rank == 0);

    size_t largest = kSizes[sizeof kSizes / sizeof kSizes[0] - 1] * (size_t)ranks;
    unsigned char* send = malloc(largest);
    unsigned char* receive = malloc(largest);
    int* counts = malloc(4 * sizeof(int) * (size_t)ranks);
    if (!send || !receive || !counts) MPI_Abort(MPI_COMM_WORLD, 2);

    double phase_time[2];
    for (int phase = 0; phase < 2; ++phase) {
        if (pcontrol) MPI_Pcontrol(phase == 0 ? 0 : 1);
        MPI_Barrier(MPI_COMM_WORLD);
        double start = MPI_Wtime();
        int first = phase == 0 ? 0 : rounds_a, end = phase == 0 ? rounds_a : rounds_a + rounds_b;
        for (int round = first; round < end; ++round)
            round_of_alltoallv(rank, ranks, round, send, receive, counts, counts + ranks, counts + 2 * ranks,
                               counts + 3 * ranks);
        MPI_Barrier(MPI_COMM_WORLD);
        phase_time[phase] = MPI_Wtime() - start;
    }
    if (rank == 0) printf("phase A: %.9f s\nphase B: %.9f s\n", phase_time[0], phase_time[1]);
    free(send);
    free(receive);
    free(counts);
    return check_finish("mpi_network_switch");
}
