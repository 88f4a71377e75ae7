/* The threads of a rank agree on the time: a deadline computed on the rank's simulated
 * (main) thread and waited for by another thread, the way libevent runs PMIx's timers in
 * its progress thread, expires after that much *real* time: neither at once nor never.
 *
 * usage: thread_timers [--exact]
 *   --exact   the run uses the zero CPU model: the main thread's clock must show exactly
 *             the simulated time (5 s of sleep), whatever real time the other thread spent.
 *
 * Real time is read from /proc/uptime, which nothing simulates. Exit status 0 when all
 * holds, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

#define NS 1000000000LL
#define WAIT_NS 300000000LL /* each timer: 300 ms */

static long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (long long)ts.tv_sec * NS + ts.tv_nsec;
}

static struct timespec to_timespec(long long ns)
{
    struct timespec ts = {(time_t)(ns / NS), (long)(ns % NS)};
    return ts;
}

/* A progress thread in libevent's manner: it waits on an epoll set (an eventfd to be
 * woken) with a timeout computed from its own CLOCK_MONOTONIC and the earliest deadline,
 * and "fires" the timer when its clock has reached the deadline. */
static int wake_fd, epoll_fd;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fired_cond = PTHREAD_COND_INITIALIZER;
static long long deadline = -1; /* CLOCK_MONOTONIC ns, under lock; -2 stops the thread */
static int fired = 0;
static double fired_after = -1.0; /* real seconds between the wake-up and the firing */
static long long thread_clock_at_wake = 0;

static void* progress_thread(void* unused)
{
    (void)unused;
    double woken = -1.0;
    for (;;) {
        pthread_mutex_lock(&lock);
        long long due = deadline;
        pthread_mutex_unlock(&lock);
        if (due == -2) return NULL;
        int timeout_ms = -1;
        if (due >= 0) {
            long long left = due - now_ns(CLOCK_MONOTONIC);
            if (left <= 0) {
                pthread_mutex_lock(&lock);
                deadline = -1;
                fired = 1;
                fired_after = host_uptime() - woken;
                pthread_cond_signal(&fired_cond);
                pthread_mutex_unlock(&lock);
                continue;
            }
            timeout_ms = (int)((left + 999999) / 1000000);
        }
        struct epoll_event event;
        int n = epoll_wait(epoll_fd, &event, 1, timeout_ms);
        if (n == 1) {
            unsigned long long count;
            if (read(wake_fd, &count, sizeof count) != sizeof count) return NULL;
            woken = host_uptime();
            thread_clock_at_wake = now_ns(CLOCK_MONOTONIC);
        }
    }
}

/* Arms a timer WAIT_NS ahead on the main thread's clock, hands it to the progress thread
 * and waits until it fires. Returns the real seconds it took to fire. */
static double run_timer(long long* main_clock_at_arm)
{
    pthread_mutex_lock(&lock);
    *main_clock_at_arm = now_ns(CLOCK_MONOTONIC);
    deadline = *main_clock_at_arm + WAIT_NS;
    fired = 0;
    pthread_mutex_unlock(&lock);
    unsigned long long one = 1;
    if (write(wake_fd, &one, sizeof one) != sizeof one) return -1.0;
    pthread_mutex_lock(&lock);
    while (!fired) pthread_cond_wait(&fired_cond, &lock);
    double after = fired_after;
    pthread_mutex_unlock(&lock);
    return after;
}

/* A direct clock syscall minus the libc clock, on another thread. */
static void* raw_minus_libc(void* arg)
{
    long long libc = now_ns(CLOCK_MONOTONIC);
    struct timespec raw;
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw);
    *(long long*)arg = (long long)raw.tv_sec * NS + raw.tv_nsec - libc;
    return NULL;
}

struct waiter {
    pthread_cond_t cond;
    struct timespec deadline;
    int rc;
    double took;
};

/* pthread_cond_timedwait on another thread with a CLOCK_REALTIME deadline from the main
 * thread: the kernel times it on the host's clock. */
static void* timed_waiter(void* arg)
{
    struct waiter* w = arg;
    double start = host_uptime();
    pthread_mutex_lock(&lock);
    w->rc = pthread_cond_timedwait(&w->cond, &lock, &w->deadline);
    pthread_mutex_unlock(&lock);
    w->took = host_uptime() - start;
    return NULL;
}

int main(int argc, char** argv)
{
    int exact = argc > 1 && strcmp(argv[1], "--exact") == 0;
    wake_fd = eventfd(0, EFD_CLOEXEC);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN};
    if (wake_fd < 0 || epoll_fd < 0 || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &event) != 0) {
        perror("thread_timers: epoll");
        return 1;
    }
    const long long start = now_ns(CLOCK_MONOTONIC);
    pthread_t thread;
    pthread_create(&thread, NULL, progress_thread, NULL);

    /* 1. A timer armed at once. */
    long long armed;
    double took = run_timer(&armed);
    printf("timer armed at start: fired after %.2f s of real time\n", took);
    CHECK_THAT(took >= 0.2 && took < 2.0, "a %lld ms timer fired after %.3f s of real time", WAIT_NS / 1000000, took);
    CHECK_THAT(thread_clock_at_wake >= armed && thread_clock_at_wake - armed < NS,
           "the other thread's clock (%lld ns) is not the main thread's (%lld ns) at the wake-up",
           thread_clock_at_wake, armed);

    /* 2. After a 5 s simulated sleep (almost no real time): the other thread's clock has
     * moved with the main thread's. */
    double up0 = host_uptime();
    sleep(5);
    CHECK_THAT(host_uptime() - up0 < 2.5, "the simulated sleep took %.2f s of real time", host_uptime() - up0);
    took = run_timer(&armed);
    printf("timer armed after a 5 s sleep: fired after %.2f s of real time\n", took);
    CHECK_THAT(took >= 0.2 && took < 2.0, "a %lld ms timer fired after %.3f s of real time", WAIT_NS / 1000000, took);

    /* 3. A CLOCK_REALTIME deadline for pthread_cond_timedwait on another thread. */
    struct waiter w = {.cond = PTHREAD_COND_INITIALIZER};
    w.deadline = to_timespec(now_ns(CLOCK_REALTIME) + WAIT_NS);
    pthread_t waiter_thread;
    pthread_create(&waiter_thread, NULL, timed_waiter, &w);
    pthread_join(waiter_thread, NULL);
    printf("pthread_cond_timedwait on another thread: %s after %.2f s of real time\n",
           w.rc == ETIMEDOUT ? "timed out" : strerror(w.rc), w.took);
    CHECK_THAT(w.rc == ETIMEDOUT, "pthread_cond_timedwait returned %d", w.rc);
    CHECK_THAT(w.took >= 0.2 && w.took < 2.0, "pthread_cond_timedwait took %.3f s of real time", w.took);

    /* 4. A direct clock syscall of another thread agrees with its libc clock. */
    long long difference = 0;
    pthread_t raw_thread;
    pthread_create(&raw_thread, NULL, raw_minus_libc, &difference);
    pthread_join(raw_thread, NULL);
    CHECK_THAT(difference >= 0 && difference < NS / 10,
           "on another thread, a direct clock syscall is %lld ns away from the libc clock", difference);

    pthread_mutex_lock(&lock);
    deadline = -2;
    pthread_mutex_unlock(&lock);
    unsigned long long one = 1;
    if (write(wake_fd, &one, sizeof one) != sizeof one) return 1;
    pthread_join(thread, NULL);

    /* The main thread's clock shows the simulated time only: 5 s of sleep, plus its own CPU
     * time in the measured model (the real time spent waiting for the other thread is not
     * simulated time). */
    long long moved = now_ns(CLOCK_MONOTONIC) - start;
    printf("main thread's clock moved %lld.%09lld s\n", moved / NS, moved % NS);
    if (exact)
        CHECK_THAT(moved == 5 * NS, "the main thread's clock moved %lld ns, expected exactly 5 s", moved);
    else
        CHECK_THAT(moved >= 5 * NS && moved < 5 * NS + NS / 2, "the main thread's clock moved %lld ns", moved);
    return failures ? 1 : 0;
}
