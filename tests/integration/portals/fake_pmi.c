/* Stands for the libpmi of a real process manager (Slurm's, MPICH's): a rank that
 * s4bxi-launch did not start must reach it through libportals' PMI entry points, which
 * forward there (rank 42 tells it apart), instead of being answered by the simulation. */
#include <pmi.h>

int PMI_Init(int *spawned)
{
    *spawned = PMI_FALSE;
    return PMI_SUCCESS;
}

int PMI_Get_rank(int *rank)
{
    *rank = 42;
    return PMI_SUCCESS;
}
