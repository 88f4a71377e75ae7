/* Linked against a libpmi (fake_pmi.c): prints the rank PMI gives, so that check_pmi.py
 * sees who answered, the simulation (spawn mode) or that library (everywhere else). */
#include <pmi.h>
#include <stdio.h>

int main(void)
{
    int spawned, rank = -1;
    if (PMI_Init(&spawned) != PMI_SUCCESS || PMI_Get_rank(&rank) != PMI_SUCCESS) return 3;
    printf("PMI rank %d\n", rank);
    return 0;
}
