/* PMI_Abort (what SOS's shmem_global_exit calls): rank ABORTER calls it with status
 * STATUS while the others wait in PMI_Barrier, which it never enters. The run must end
 * at once with that status (check_pmi_abort.py). With "finish" as argument, the ranks
 * that do not abort leave the barrier out and exit 0 first: the abort still sets the
 * launcher's status. */
#define _POSIX_C_SOURCE 200809L
#include <pmi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    int spawned, rank, status = argc > 1 ? atoi(argv[1]) : 7, aborter = argc > 2 ? atoi(argv[2]) : 1;
    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS) return 2;
    if (rank == aborter) {
        /* Let the others reach their barrier first (simulated time, no wall time). */
        struct timespec later = {0, 1000000};
        nanosleep(&later, NULL);
        PMI_Abort(status, "the input is wrong");
        return 3; /* not reached */
    }
    PMI_Barrier();
    printf("rank %d left the barrier\n", rank);
    return 4;
}
