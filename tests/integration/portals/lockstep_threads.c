/* Threads of an OpenSHMEM rank in lockstep (docs/time.md "Threads in lockstep"): the same
 * run every time under --cpu-model zero, whatever the host does. The program defines
 * shmem_init (not exported, as with a static libsma), so the interposer takes it for an
 * OpenSHMEM program. Each of the 2 ranks starts THREADS threads that do, ROUNDS times:
 * - a fetch-add of 1 on a counter word of the other rank, waiting for the reply
 *   (PtlCTWait, parked): the old value each thread gets depends on the order in which
 *   both ranks' threads reach the server; thread 0 holds a read-write lock for writing
 *   meanwhile, which the others take for reading (and let go) before theirs;
 * - a step of a chain through a mutex and a condition variable: thread t waits for its
 *   turn (turn == t), adds its old value to a log, hands the turn to the next thread;
 * - a ring of semaphores: thread t < THREADS - 1 waits for a post of thread t + 1
 *   (sem_wait, which must not fail), then posts for thread t - 1;
 * - a barrier of all the threads;
 * - the last thread sets a flag with a plain store and the first waits for it by reading
 *   memory (no call: the watchdog takes the turn from it).
 * The main thread joins them and prints a digest of the log, the word its peer's threads
 * added to, and its simulated time; check_lockstep_threads.py compares runs.
 * With the argument spin-forever, each rank's one thread spins for good on a flag no one
 * sets: a deadlock the server must report.
 * usage: lockstep_threads [spin-forever] (run on 2 ranks) */
#define _POSIX_C_SOURCE 200809L
#include <portals4.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fetch_add.h"
#include "../test_checks.h"

#define PID 49
#define PT 0
#define THREADS 4
#define ROUNDS 50

void shmem_init(void);
void shmem_init(void) {}

static ptl_handle_ni_t ni;
static ptl_process_t peer;
static uint64_t word; /* the peer's threads add to it */
static int failed;

static pthread_mutex_t chain_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t chain_moved = PTHREAD_COND_INITIALIZER;
static int chain_turn;
static uint64_t digest = 1469598103934665603ull; /* FNV-1a of the old values, in chain order */
static pthread_barrier_t round_end;
static sem_t ring[THREADS];
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static volatile int flag_round;

static void* worker(void* arg)
{
    int me = (int)(intptr_t)arg;
    struct fetch_add f;
    fetch_add_bind(ni, &f);
    for (int round = 1; round <= ROUNDS; ++round) {
        if ((me == 0 ? pthread_rwlock_wrlock(&rw) : pthread_rwlock_rdlock(&rw)) != 0) failed = 1;
        if (me != 0 && pthread_rwlock_unlock(&rw) != 0) failed = 1;
        if (!fetch_add_round(&f, peer, PT, (ptl_size_t)round)) failed = 1;
        uint64_t old = f.old;
        if (me == 0 && pthread_rwlock_unlock(&rw) != 0) failed = 1;

        pthread_mutex_lock(&chain_lock);
        while (chain_turn != me) pthread_cond_wait(&chain_moved, &chain_lock);
        for (int b = 0; b < 8; ++b) digest = (digest ^ ((old >> (8 * b)) & 0xff)) * 1099511628211ull;
        chain_turn = (me + 1) % THREADS;
        pthread_cond_broadcast(&chain_moved);
        pthread_mutex_unlock(&chain_lock);

        if (me < THREADS - 1 && sem_wait(&ring[me]) != 0) failed = 1;
        if (me > 0 && sem_post(&ring[me - 1]) != 0) failed = 1;

        pthread_barrier_wait(&round_end);
        if (me == THREADS - 1) flag_round = round;
        if (me == 0)
            while (flag_round != round) {
            }
        pthread_barrier_wait(&round_end);
    }
    fetch_add_release(&f);
    return NULL;
}

/* Spins for good on a flag no one sets (the mode "spin-forever"). */
static void* spin_forever(void* unused)
{
    (void)unused;
    while (!flag_round) {
    }
    return NULL;
}

int main(int argc, char** argv)
{
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    shmem_init();
    if (argc > 1 && strcmp(argv[1], "spin-forever") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, spin_forever, NULL);
        pthread_join(thread, NULL);
        return 0;
    }
    peer = fetch_add_expose("lockstep_threads", rank, PID, PT, &word, &ni);

    pthread_barrier_init(&round_end, NULL, THREADS);
    for (int i = 0; i < THREADS; ++i) sem_init(&ring[i], 0, 0);
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; ++i) pthread_create(&threads[i], NULL, worker, (void*)(intptr_t)i);
    for (int i = 0; i < THREADS; ++i) pthread_join(threads[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    pthread_barrier_destroy(&round_end);

    pmi_barrier_or_exit("lockstep_threads"); /* the peer's adds are all in */
    int ok = !failed && word == (uint64_t)THREADS * ROUNDS;
    printf("lockstep_threads: rank %d: word %llu (expected %d), digest %016llx, threads_ns=%lld %s\n", rank,
           (unsigned long long)word, THREADS * ROUNDS, (unsigned long long)digest,
           (long long)(end.tv_sec - start.tv_sec) * 1000000000LL + (end.tv_nsec - start.tv_nsec), ok ? "ok" : "FAILED");
    PtlNIFini(ni);
    PtlFini();
    return ok ? 0 : 1;
}
