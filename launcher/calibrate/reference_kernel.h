/* The reference kernel whose speed `s4bxi-launch --calibrate` measures (host_calibration.c)
 * and that the calibration's test runs under the simulation (tests/integration): the same
 * source, compiled the same way, so that a factor measured on one predicts the other.
 *
 * Eight independent multiply-add chains on doubles, in registers: compute-bound, no
 * memory traffic, no vectorisation the compiler could apply differently from one caller to
 * the next (each chain depends on its previous value). Two flops per multiply-add. */
#ifndef S4BXI_REFERENCE_KERNEL_H
#define S4BXI_REFERENCE_KERNEL_H

#include <stdint.h>

#define S4BXI_KERNEL_FLOPS_PER_ROUND 16.0 /* 8 chains, a multiply and an add each */

/* Runs `rounds` rounds; returns a value that depends on every one of them, so that no
 * round can be left out. */
static __attribute__((noinline, unused)) double s4bxi_reference_kernel(uint64_t rounds)
{
    volatile double seed = 1.0;
    double a = seed, b = seed + 1e-9, c = seed + 2e-9, d = seed + 3e-9;
    double e = seed + 4e-9, f = seed + 5e-9, g = seed + 6e-9, h = seed + 7e-9;
    const double m = 0.999999999, k = 1e-9;
    for (uint64_t i = 0; i < rounds; ++i) {
        a = a * m + k;
        b = b * m + k;
        c = c * m + k;
        d = d * m + k;
        e = e * m + k;
        f = f * m + k;
        g = g * m + k;
        h = h * m + k;
        __asm__ volatile("" : "+x"(a), "+x"(b), "+x"(c), "+x"(d), "+x"(e), "+x"(f), "+x"(g), "+x"(h));
    }
    return a + b + c + d + e + f + g + h;
}

#endif
