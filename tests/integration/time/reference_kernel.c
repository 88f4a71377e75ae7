/* The calibration's reference kernel (launcher/calibrate/reference_kernel.h), run under the
 * simulation: prints the flops it did and the simulated seconds they took, as its virtual
 * clock shows them.
 * Usage: reference_kernel ROUNDS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../../launcher/calibrate/reference_kernel.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv)
{
    uint64_t rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    double start = now();
    double result = s4bxi_reference_kernel(rounds);
    double seconds = now() - start;
    printf("flops %.6g seconds %.9f (result %g)\n", S4BXI_KERNEL_FLOPS_PER_ROUND * (double)rounds, seconds, result);
    return 0;
}
