/* OpenMP threads of an OpenSHMEM rank in lockstep (docs/time.md "Threads in lockstep"): GCC's
 * OpenMP runtime makes its threads wait with futex calls of its own, which the lockstep takes
 * over; the run is the same every time under --cpu-model zero. The program defines
 * shmem_init, so the interposer takes it for an OpenSHMEM program (lockstep_threads.c does
 * the same with pthreads). Each of the 2 ranks runs REGIONS parallel regions of THREADS
 * threads (the runtime's pool docks between them), each thread doing, ROUNDS times:
 * - a fetch-add of 1 on a counter word of the other rank, waiting for the reply
 *   (PtlCTWait, parked): the old value each thread gets depends on the order in which
 *   both ranks' threads reach the server;
 * - an ordered loop whose iteration t runs on thread t: in thread order, each adds its old
 *   value to a digest (the runtime's ordered semaphores), then the loop's barrier;
 * - a critical section adding its old value to a sum (the runtime's mutex), and a
 *   lock of the program's (omp_set_lock) around a counter.
 * Then 1.5 ms of computation with no call, its workers docked.
 * Rank prints the digest, the word its peer's threads added to, and its simulated time;
 * check_lockstep_threads.py compares runs.
 * usage: lockstep_openmp (run on 2 ranks) */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <portals4.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fetch_add.h"
#include "../test_checks.h"

#define PID 50
#define PT 0
#define THREADS 4
#define ROUNDS 25
#define REGIONS 2

void shmem_init(void);
void shmem_init(void) {}

static ptl_handle_ni_t ni;
static ptl_process_t peer;
static uint64_t word; /* the peer's threads add to it */
static int failed;
static uint64_t digest = 1469598103934665603ull; /* FNV-1a of the old values, in thread order */
static uint64_t sum;
static int locked_count;

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    shmem_init();
    peer = fetch_add_expose("lockstep_openmp", rank, PID, PT, &word, &ni);
    omp_lock_t lock;
    omp_init_lock(&lock);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int region = 0; region < REGIONS; ++region) {
#pragma omp parallel num_threads(THREADS)
        {
            int me = omp_get_thread_num();
            struct fetch_add f;
            fetch_add_bind(ni, &f);
            for (int round = 1; round <= ROUNDS; ++round) {
                if (!fetch_add_round(&f, peer, PT, (ptl_size_t)round)) failed = 1;
                uint64_t old = f.old;
#pragma omp for ordered schedule(static, 1)
                for (int t = 0; t < THREADS; ++t) {
#pragma omp ordered
                    {
                        if (t != me) failed = 1;
                        for (int b = 0; b < 8; ++b) digest = (digest ^ ((old >> (8 * b)) & 0xff)) * 1099511628211ull;
                    }
                }
#pragma omp critical
                sum += old;
                omp_set_lock(&lock);
                ++locked_count;
                omp_unset_lock(&lock);
            }
            fetch_add_release(&f);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    omp_destroy_lock(&lock);

    pmi_barrier_or_exit("lockstep_openmp"); /* the peer's adds are all in */
    /* A computation of about 1.5 ms of CPU time with no call, the OpenMP workers docked
     * (still in lockstep): the watchdog takes it for a spin on memory, but a rank's threads
     * alone spin 5 ms before the rank waits in the simulation for a write (with 0.25 ms,
     * ranks ended at other dates from run to run); and had it waited, with nothing under
     * way in the simulation no write could come: the rank must go on all the same. */
    volatile uint64_t mix = 0;
    for (uint64_t i = 0; i < 1500000; ++i) mix = mix * 6364136223846793005ull + i;
    int expected = THREADS * ROUNDS * REGIONS;
    int ok = !failed && word == (uint64_t)expected && locked_count == expected;
    printf("lockstep_openmp: rank %d: word %llu (expected %d), digest %016llx, sum %llu, threads_ns=%lld %s\n", rank,
           (unsigned long long)word, expected, (unsigned long long)digest, (unsigned long long)sum,
           (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec), ok ? "ok" : "FAILED");
    PtlNIFini(ni);
    PtlFini();
    return ok ? 0 : 1;
}
