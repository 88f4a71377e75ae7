/* A ping-pong of short messages that land before their receive is posted: rank 1 computes
 * a little, a different time each round, before it posts the receive for the message rank 0
 * has already sent. Open MPI's Portals MTL then finds the message in one of its overflow
 * blocks, and each time a block fills the NIC unlinks it (AUTO_UNLINK) while the receive
 * may be being posted. A message lost in between would leave both ranks waiting for ever.
 * Usage: mpi_unexpected [ROUNDS] (20000 by default). */
#include "mpi_check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_rank = rank;
    int rounds = argc > 1 ? atoi(argv[1]) : 20000;
    CHECK(size == 2, "2 ranks needed, not %d", size);
    uint64_t message = 0;
    volatile uint64_t work = 0;
    for (int round = 0; round < rounds && size == 2; ++round) {
        if (rank == 0) {
            message = (uint64_t)round;
            MPI_Send(&message, 1, MPI_UINT64_T, 1, round & 0xffff, MPI_COMM_WORLD);
            MPI_Recv(&message, 1, MPI_UINT64_T, 1, round & 0xffff, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(message == (uint64_t)round + 1, "round %d: %llu back", round, (unsigned long long)message);
        } else {
            for (int i = 0; i < 200 + (round % 97) * 17; ++i) work += (uint64_t)i;  /* a little compute */
            MPI_Recv(&message, 1, MPI_UINT64_T, 0, round & 0xffff, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(message == (uint64_t)round, "round %d: %llu received", round, (unsigned long long)message);
            ++message;
            MPI_Send(&message, 1, MPI_UINT64_T, 0, round & 0xffff, MPI_COMM_WORLD);
        }
    }
    return check_finish("mpi_unexpected");
}
