/* A thread that ends the process while the simulated thread waits in a Portals call (an
 * error path calling exit from a helper thread): rank 0 waits in PtlEQWait for what never
 * comes, and a helper thread calls exit(3) after 100 ms of real time. Rank 1 computes
 * meanwhile, holding simulated time, until rank 0's process is gone (its pid in the file
 * named by argv[1]): a loop of fixed length could end first on a fast host, and rank 0's
 * wait would then be a true deadlock. The run must report rank 0 finished with status 3,
 * not crashed. */
#define _DEFAULT_SOURCE
#include <portals4.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../test_checks.h"

static void *exit_later(void *unused)
{
    (void)unused;
    struct timespec delay = {0, 100 * 1000 * 1000};
    nanosleep(&delay, NULL);  /* a thread of its own: real time */
    exit(3);
}

/* Rank 0's pid from the file, or 0 while it is not written yet. */
static pid_t peer_pid(const char *path)
{
    FILE *file = fopen(path, "r");
    long pid = 0;
    if (file) {
        if (fscanf(file, "%ld", &pid) != 1) pid = 0;
        fclose(file);
    }
    return (pid_t)pid;
}

/* True once the process has exited: no /proc entry, or a zombie. */
static int process_gone(pid_t pid)
{
    char path[64], state = 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *file = fopen(path, "r");
    if (!file) return 1;
    /* "pid (comm) state ...": the state follows the last ')'. */
    char line[512];
    if (fgets(line, sizeof line, file)) {
        char *end = strrchr(line, ')');
        if (end && end[1] == ' ') state = end[2];
    }
    fclose(file);
    return state == 'Z' || state == 'X';
}

int main(int argc, char **argv)
{
    rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    expect(argc == 2, "the pid file's path is the one argument");
    ptl_handle_ni_t ni;
    ptl_handle_eq_t eq;
    EXPECT_RC(PtlInit(), PTL_OK);
    EXPECT_RC(PtlNIInit(PTL_IFACE_DEFAULT, PTL_NI_MATCHING | PTL_NI_PHYSICAL, 6, NULL, NULL, &ni), PTL_OK);
    EXPECT_RC(PtlEQAlloc(ni, 16, &eq), PTL_OK);
    if (rank == 0) {
        FILE *file = fopen(argv[1], "w");
        expect(file && fprintf(file, "%d\n", (int)getpid()) > 0 && fclose(file) == 0, "rank 0 wrote its pid");
        pthread_t helper;
        pthread_create(&helper, NULL, exit_later, NULL);
        ptl_event_t event;
        PtlEQWait(eq, &event);
        expect(0, "the wait returned, though nothing was sent");
    }
    /* Busy, not sleeping: a computing rank holds simulated time. Bounded by the number of
     * looks (tens of seconds of wall time), in case rank 0 never exits. */
    pid_t peer = 0;
    long looks = 0;
    for (; looks < 2000000L; ++looks) {
        if (!peer) peer = peer_pid(argv[1]);
        if (peer && process_gone(peer)) break;
    }
    expect(looks < 2000000L, "rank 0's process ended while rank 1 computed");
    EXPECT_RC(PtlNIFini(ni), PTL_OK);
    PtlFini();
    return 0;
}
