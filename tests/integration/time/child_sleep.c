/* A rank's children inherit its seccomp filter but must run in real time and never die
 * of it: a shell through system(), an exec'd /bin/true, a forked copy making raw time
 * syscalls, and optionally HELPER (a program without our library, e.g. static).
 *
 * usage: child_sleep [--exact] [HELPER]
 *   --exact  zero CPU model: the rank's own clock must not move while it waits for its
 *            children (it is blocked outside the simulation and makes no request).
 * Exit status 0 when every child succeeded and took the real time it should.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

static void expect_exit0(const char* what, int status)
{
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        fprintf(stderr, "child_sleep: %s: wait status 0x%x (%s %d)\n", what, status,
                WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        ++failures;
    } else {
        printf("%s: ok\n", what);
    }
}

static int run(char* const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    return status;
}

int main(int argc, char** argv)
{
    int exact = 0;
    const char* helper = NULL;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--exact") == 0) exact = 1;
        else helper = argv[i];
    }
    struct timespec v0, v1;
    clock_gettime(CLOCK_MONOTONIC, &v0);

    double up0 = host_uptime();
    expect_exit0("system(\"sleep 0.2\")", system("sleep 0.2"));
    double took = host_uptime() - up0;
    /* /proc/uptime has a 10 ms resolution. */
    if (up0 >= 0 && took < 0.18) {
        fprintf(stderr, "child_sleep: the child's sleep 0.2 took only %.2f s of host time\n", took);
        ++failures;
    }

    char* true_argv[] = {"/bin/true", NULL};
    expect_exit0("fork + exec /bin/true", run(true_argv));

    /* A forked copy is not a rank: libc and raw syscalls give it the host's time. */
    pid_t pid = fork();
    if (pid == 0) {
        double start = host_uptime();
        struct timespec req = {0, 100000000L};
        if (syscall(SYS_nanosleep, &req, NULL) != 0) _exit(2);
        if (usleep(100000) != 0) _exit(3);
        if (host_uptime() - start < 0.18) _exit(4);
        struct timespec raw, libc;
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &raw);
        clock_gettime(CLOCK_MONOTONIC, &libc);
        if (libc.tv_sec - raw.tv_sec > 1 || raw.tv_sec - libc.tv_sec > 1) _exit(5);
        _exit(0);
    }
    int status = -1;
    waitpid(pid, &status, 0);
    expect_exit0("forked child with raw time syscalls", status);

    if (helper) {
        char* helper_argv[] = {(char*)helper, NULL};
        expect_exit0(helper, run(helper_argv));
    }

    clock_gettime(CLOCK_MONOTONIC, &v1);
    long long moved = (long long)(v1.tv_sec - v0.tv_sec) * 1000000000LL + (v1.tv_nsec - v0.tv_nsec);
    printf("the rank's own clock moved %lld ns meanwhile\n", moved);
    /* Waiting for children is not simulated time: at most the rank's own CPU time. */
    if (exact ? moved != 0 : moved >= 200000000LL) {
        fprintf(stderr, "child_sleep: the rank's clock moved %lld ns while it waited for its children\n", moved);
        ++failures;
    }
    return failures ? 1 : 0;
}
