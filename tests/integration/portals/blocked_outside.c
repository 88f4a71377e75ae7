/* Rank 1 blocks in a FIFO read (outside the simulation) until rank 0, after 2 s of
 * simulated sleep, writes to it. Rank 1 must not hold simulated time while blocked, and
 * must resume at the simulation's current date: it prints how far its clock moved. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    int rank = atoi(getenv("S4BXI_RANK") ? getenv("S4BXI_RANK") : "0");
    struct timespec ts;
    if (rank == 0) {
        sleep(2);
        int fd = open(argv[1], O_WRONLY);
        if (fd < 0 || write(fd, "x", 1) != 1) return 3;
        close(fd);
    } else {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double start = ts.tv_sec + ts.tv_nsec * 1e-9;
        int fd = open(argv[1], O_RDONLY);
        char byte;
        if (fd < 0 || read(fd, &byte, 1) != 1) return 3;
        close(fd);
        clock_gettime(CLOCK_MONOTONIC, &ts);
        printf("rank 1 resumed at %.9f\n", ts.tv_sec + ts.tv_nsec * 1e-9 - start);
    }
    return 0;
}
