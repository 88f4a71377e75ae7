/* A small OpenSHMEM program for the launch checks: each PE puts its number into the next
 * PE's symmetric variable, adds one to a counter on PE 0 with an atomic, and checks both
 * after a barrier. usage: shmem_ring [FAILING_PE STATUS] (that PE then exits with STATUS
 * after shmem_finalize). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int from_left = -1;
static long counter = 0;

int main(int argc, char** argv)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_int_p(&from_left, me, (me + 1) % npes);
    shmem_long_atomic_add(&counter, 1, 0);
    shmem_barrier_all();
    int left = (me + npes - 1) % npes;
    int status = 0;
    if (from_left != left) {
        fprintf(stderr, "shmem_ring: PE %d got %d from its left, expected %d\n", me, from_left, left);
        status = 1;
    }
    if (me == 0 && counter != npes) {
        fprintf(stderr, "shmem_ring: the counter on PE 0 is %ld, expected %d\n", counter, npes);
        status = 1;
    }
    shmem_barrier_all();
    if (me == 0 && status == 0) printf("shmem_ring: ok on %d PEs\n", npes);
    shmem_finalize();
    if (argc == 3 && me == atoi(argv[1])) return atoi(argv[2]);
    return status;
}
