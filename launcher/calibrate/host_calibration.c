/* s4bxi-calibrate: what this host's cores do, natively, for the measured CPU model
 * (docs/time.md "The MPI library's code", docs/model.md "A host that is not the target").
 * Run by s4bxi-launch (never under the simulation), as a singleton MPI process on Open MPI's
 * self transport. Prints two lines:
 *
 *   flops=<flop/s of one core on the reference kernel>
 *   mpi=send=<ns>,receive=<ns>,poll=<ns>,collective=<ns>,reduce_per_byte=<ns>
 *
 * Each figure is the CPU time of the simulated thread per call on a warm core: the best
 * of several batches of many calls, so that neither the host's other work (a descheduled
 * thread's CPU clock stops) nor a cold start counts. With --no-mpi, only the first line. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "reference_kernel.h"

enum { kCalls = 1000, kBatches = 9, kKernelRepetitions = 7 };

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double host_flops(void)
{
    const uint64_t rounds = 2000000; /* 32 Mflop: about 10 ms */
    double best = 1e30, sink = 0.0;
    for (int i = 0; i < kKernelRepetitions; ++i) {
        double start = cpu_seconds();
        sink += s4bxi_reference_kernel(rounds);
        double spent = cpu_seconds() - start;
        if (spent < best) best = spent;
    }
    if (sink == 0.12345) puts(""); /* keep the result alive */
    return S4BXI_KERNEL_FLOPS_PER_ROUND * (double)rounds / best;
}

static double best_of(double* batches)
{
    double best = batches[0];
    for (int i = 1; i < kBatches; ++i)
        if (batches[i] < best) best = batches[i];
    return best;
}

static void check(int rc, const char* what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "s4bxi-calibrate: %s failed (%d)\n", what, rc);
        exit(1);
    }
}

/* Per call, ns: a send of 8 bytes to itself, the receive of one already there, a test of a
 * receive that nothing will complete, an allreduce of 8 bytes, and the reduction of
 * MPI_SUM over doubles per byte. */
static void calibrate_mpi(void)
{
    static MPI_Request requests[kCalls];
    static char payloads[kCalls][8];
    double send[kBatches], receive[kBatches], poll[kBatches], collective[kBatches], reduce[kBatches];
    enum { kReduceBytes = 64 * 1024, kSmallReduceBytes = 1024 };
    double* in = calloc(kReduceBytes / sizeof(double), sizeof(double));
    double* inout = calloc(kReduceBytes / sizeof(double), sizeof(double));
    if (!in || !inout) exit(1);
    for (int batch = -1; batch < kBatches; ++batch) { /* batch -1 warms up */
        double start = cpu_seconds();
        for (int i = 0; i < kCalls; ++i)
            check(MPI_Isend(payloads[i], 8, MPI_BYTE, 0, 7, MPI_COMM_SELF, &requests[i]), "MPI_Isend");
        double sent = cpu_seconds();
        for (int i = 0; i < kCalls; ++i)
            check(MPI_Recv(payloads[i], 8, MPI_BYTE, 0, 7, MPI_COMM_SELF, MPI_STATUS_IGNORE), "MPI_Recv");
        double received = cpu_seconds();
        check(MPI_Waitall(kCalls, requests, MPI_STATUSES_IGNORE), "MPI_Waitall");

        MPI_Request pending;
        char never[8];
        int flag = 0;
        check(MPI_Irecv(never, 8, MPI_BYTE, 0, 8, MPI_COMM_SELF, &pending), "MPI_Irecv");
        double polling = cpu_seconds();
        for (int i = 0; i < kCalls; ++i) check(MPI_Test(&pending, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        double polled = cpu_seconds();
        check(MPI_Cancel(&pending), "MPI_Cancel");
        check(MPI_Wait(&pending, MPI_STATUS_IGNORE), "MPI_Wait");

        double value = 1.0, sum = 0.0;
        double reducing = cpu_seconds();
        for (int i = 0; i < kCalls; ++i)
            check(MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF), "MPI_Allreduce");
        double reduced = cpu_seconds();

        double large_start = cpu_seconds();
        for (int i = 0; i < kCalls / 10; ++i)
            check(MPI_Reduce_local(in, inout, kReduceBytes / sizeof(double), MPI_DOUBLE, MPI_SUM), "MPI_Reduce_local");
        double large = (cpu_seconds() - large_start) / (kCalls / 10);
        double small_start = cpu_seconds();
        for (int i = 0; i < kCalls / 10; ++i)
            check(MPI_Reduce_local(in, inout, kSmallReduceBytes / sizeof(double), MPI_DOUBLE, MPI_SUM),
                  "MPI_Reduce_local");
        double small = (cpu_seconds() - small_start) / (kCalls / 10);

        if (batch < 0) continue;
        send[batch] = (sent - start) / kCalls;
        receive[batch] = (received - sent) / kCalls;
        poll[batch] = (polled - polling) / kCalls;
        collective[batch] = (reduced - reducing) / kCalls;
        reduce[batch] = large > small ? (large - small) / (kReduceBytes - kSmallReduceBytes) : 0.0;
    }
    free(in);
    free(inout);
    printf("mpi=send=%.1f,receive=%.1f,poll=%.1f,collective=%.1f,reduce_per_byte=%.4f\n", best_of(send) * 1e9,
           best_of(receive) * 1e9, best_of(poll) * 1e9, best_of(collective) * 1e9, best_of(reduce) * 1e9);
}

int main(int argc, char** argv)
{
    int with_mpi = !(argc > 1 && strcmp(argv[1], "--no-mpi") == 0);
    printf("flops=%.6g\n", host_flops());
    fflush(stdout);
    if (!with_mpi) return 0;
    check(MPI_Init(&argc, &argv), "MPI_Init");
    calibrate_mpi();
    MPI_Finalize();
    return 0;
}
