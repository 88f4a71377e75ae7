/* Ranks whose main thread waits outside the simulation (pthread_join) while their other
 * threads make Portals calls to each other, as SOS's threaded tests do: simulated time
 * runs through the calls' events and nowhere else. Each of the 2 ranks starts THREADS
 * threads; each thread does ROUNDS fetch-adds of 1 on a counter word of the other rank,
 * waiting for each reply (PtlCTWait on its own counter) and computing 20 us of CPU
 * between two (the simulation falls idle meanwhile), then the main thread joins them and
 * checks the sum its peer's threads added. The program prints its simulated time
 * (CLOCK_MONOTONIC around the joined threads); check_joined_threads.py bounds it.
 * usage: joined_threads (run on 2 ranks) */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fetch_add.h"
#include "../test_checks.h"

#define PID 48
#define PT 0
#define THREADS 4
#define ROUNDS 200

static ptl_handle_ni_t ni;
static ptl_process_t peer;
static uint64_t word;  /* the peer's threads add to it */
static int failed;

/* Computes for about `ns` of the thread's CPU time: the simulation falls idle meanwhile. */
static void compute(long ns)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    do clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < ns);
}

static void* adder(void* arg)
{
    (void)arg;
    struct fetch_add f;
    fetch_add_bind(ni, &f);
    for (ptl_size_t i = 1; i <= ROUNDS; ++i) {
        if (!fetch_add_round(&f, peer, PT, i)) __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
        compute(20000);
    }
    fetch_add_release(&f);
    return NULL;
}

int main(void)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    peer = fetch_add_expose("joined_threads", rank, PID, PT, &word, &ni);

    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; ++i) pthread_create(&threads[i], NULL, adder, NULL);
    for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);

    pmi_barrier_or_exit("joined_threads"); /* the peer's adds are all in */
    int ok = !failed && word == (uint64_t)THREADS * ROUNDS;
    printf("joined_threads: rank %d: word %llu (expected %d), threads_ns=%lld %s\n", rank, (unsigned long long)word,
           THREADS * ROUNDS, (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec),
           ok ? "ok" : "FAILED");
    PtlNIFini(ni);
    PtlFini();
    return ok ? 0 : 1;
}
