/* Programs that make progress between their polls, as HPCC does:
 * - its RandomAccess pattern: a receive from any source with any tag, tested with MPI_Test
 *   between the updates each rank prepares; updates go out in batches only when a bucket
 *   is full, so for long stretches nothing is on its way to anyone; then "finished"
 *   messages, and the last receive is cancelled;
 * - loops that wait for the clock to move: STREAM's checktick (MPI_Wtime until it
 *   changes) and a busy-wait of 1 ms (MPI_Wtime until a deadline);
 * - a loop of MPI_Iprobe waiting 100 ms for a message, as master/worker codes wait.
 * Under the simulation these used to hang: the polls fast-forwarded simulated time with no
 * one to send, and under --cpu-model zero the clock never moved (docs/model.md "Polling",
 * docs/time.md "Clock-spinning loops").
 * usage: mpi_progress [updates per rank [seconds of busy-wait, 1e-3 by default]] */
#include "mpi_check.h"

enum { UPDATE_TAG = 1, FINISHED_TAG = 2, PROBE_TAG = 3, BATCH = 256, MAX_PENDING = 1024 };

/* What a rank has received so far. */
struct inbox {
    uint64_t in[BATCH];
    MPI_Request request;
    long updates, checksum;
    int receiving; /* ranks that have not said they finished */
};

static void post_receive(struct inbox* box)
{
    MPI_OK(MPI_Irecv(box->in, BATCH, MPI_UINT64_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &box->request));
}

/* The receive completed with `status`: count its updates or its sender's end, then post
 * the next one. */
static void take(struct inbox* box, const MPI_Status* status)
{
    if (status->MPI_TAG == UPDATE_TAG) {
        int count = 0;
        MPI_Get_count(status, MPI_UINT64_T, &count);
        box->updates += count;
        for (int j = 0; j < count; ++j) box->checksum += (long)(box->in[j] % 1000003u);
    } else {
        CHECK(status->MPI_TAG == FINISHED_TAG, "unexpected tag %d", status->MPI_TAG);
        --box->receiving;
    }
    post_receive(box);
}

static void random_access(int rank, int size, int updates)
{
    uint64_t* buckets = calloc((size_t)size * MAX_PENDING, sizeof *buckets);
    int* filled = calloc((size_t)size, sizeof *filled);
    MPI_Request* finished = calloc((size_t)size, sizeof *finished);
    uint64_t out[BATCH], nothing = 0;
    long sent = 0, checksum_sent = 0;
    int pending = 0, done = 0;
    struct inbox box = {.receiving = size - 1};
    MPI_Request outreq = MPI_REQUEST_NULL;
    MPI_Status status;
    uint64_t state = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);

    post_receive(&box);
    for (int i = 0; i < updates || pending > 0;) {
        do {  /* take whatever arrived */
            MPI_OK(MPI_Test(&box.request, &done, &status));
            if (!done) break;
            take(&box, &status);
        } while (box.receiving > 0);
        if (i < updates && pending < MAX_PENDING) {  /* prepare one update, locally */
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            int target = (int)((state >> 33) % (uint64_t)size);
            if (target != rank) {
                buckets[(size_t)target * MAX_PENDING + filled[target]++] = state;
                ++pending;
            }
            ++i;
            continue;
        }
        MPI_OK(MPI_Test(&outreq, &done, MPI_STATUS_IGNORE));
        if (!done) continue;
        int target = 0;  /* the fullest bucket goes out */
        for (int t = 1; t < size; ++t)
            if (filled[t] > filled[target]) target = t;
        int count = filled[target] < BATCH ? filled[target] : BATCH;
        for (int j = 0; j < count; ++j) {
            out[j] = buckets[(size_t)target * MAX_PENDING + --filled[target]];
            checksum_sent += (long)(out[j] % 1000003u);
        }
        pending -= count;
        sent += count;
        MPI_OK(MPI_Isend(out, count, MPI_UINT64_T, target, UPDATE_TAG, MPI_COMM_WORLD, &outreq));
    }
    for (int t = 0; t < size; ++t)
        finished[t] = MPI_REQUEST_NULL;
    for (int t = 0; t < size; ++t)
        if (t != rank) MPI_OK(MPI_Isend(&nothing, 0, MPI_UINT64_T, t, FINISHED_TAG, MPI_COMM_WORLD, &finished[t]));
    while (box.receiving > 0) {
        MPI_OK(MPI_Wait(&box.request, &status));
        take(&box, &status);
    }
    MPI_OK(MPI_Waitall(size, finished, MPI_STATUSES_IGNORE));
    MPI_OK(MPI_Cancel(&box.request));
    MPI_OK(MPI_Wait(&box.request, &status));
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    CHECK(cancelled, "the last receive was not cancelled");
    MPI_OK(MPI_Wait(&outreq, MPI_STATUS_IGNORE));

    long totals[4] = {sent, box.updates, checksum_sent, box.checksum}, sums[4];
    MPI_Allreduce(totals, sums, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sums[0] == sums[1], "%ld updates sent, %ld received", sums[0], sums[1]);
    CHECK(sums[2] == sums[3], "checksums differ: sent %ld, received %ld", sums[2], sums[3]);
    CHECK(sums[0] > 0, "no update crossed the network");
    if (rank == 0) printf("random access: %ld updates exchanged\n", sums[0]);
    free(buckets);
    free(filled);
    free(finished);
}

static void clock_spins(int rank, double wait)
{
    /* STREAM's checktick: 20 readings, each waiting until the clock moves. */
    double previous = MPI_Wtime();
    for (int i = 0; i < 20; ++i) {
        double now;
        while ((now = MPI_Wtime()) == previous) continue;
        CHECK(now > previous, "the clock went back: %.9f after %.9f", now, previous);
        previous = now;
    }
    /* A busy-wait "computation": it ends between its length and 9/8 of it plus the first
     * step of 1 us (docs/time.md), plus what the measured CPU model charges for the last
     * reading. Under the measured model that charge is the host's CPU clock, which on a
     * loaded virtual machine has counted a few hundred microseconds the thread did not run
     * (docs/time.md "Not corrected"): the best of a few tries is checked, every one must
     * last its length. */
    const double longest = wait * 9 / 8 + 2e-6;
    double best = 1e9;
    for (int attempt = 0; attempt < 4 && best > longest; ++attempt) {
        double start = MPI_Wtime(), end;
        while ((end = MPI_Wtime()) - start < wait) continue;
        CHECK(end - start >= wait, "a busy-wait of %g s ended after %.9f s (rank %d)", wait, end - start, rank);
        if (end - start < best) best = end - start;
    }
    CHECK(best <= longest, "a busy-wait of %g s took %.9f s at best of 4 (rank %d)", wait, best, rank);
}

/* Rank 1 sleeps 100 ms, then sends; rank 0 waits for the message with MPI_Iprobe. The
 * fast-forward of the empty polls between probes grows (4 us, fourfold per probe up to
 * 100 us, then a quarter of the time already waited: docs/model.md "Polling"), so 100 ms
 * take 4 + log(100 ms / 100 us) / log(5/4), about 35 probes: at most 64 here, where a
 * step that restarted at each probe took over 100 000. The message lands in the overflow
 * list, which ends the fast-forward: rank 0 sees it within microseconds of its arrival,
 * not a quarter of the wait late. */
static void probe_wait(int rank, int size)
{
    const double wait = 0.1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (size < 2 || rank > 1) return;
    if (rank == 1) {
        struct timespec pause = {0, (long)(wait * 1e9)};
        nanosleep(&pause, NULL);
        int value = 7;
        MPI_OK(MPI_Send(&value, 1, MPI_INT, 0, PROBE_TAG, MPI_COMM_WORLD));
        return;
    }
    double start = MPI_Wtime();
    long probes = 0;
    int flag = 0, value = 0;
    while (!flag) {
        MPI_OK(MPI_Iprobe(1, PROBE_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        ++probes;
    }
    double seen = MPI_Wtime() - start;
    MPI_OK(MPI_Recv(&value, 1, MPI_INT, 1, PROBE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(value == 7, "probed message holds %d", value);
    CHECK(probes <= 64, "%ld probes to wait 100 ms", probes);
    /* What is checked is the fast-forward: a step that did not end with the message's arrival
     * would see it up to a quarter of the wait (25 ms) late. The barrier's ranks leave it
     * microseconds apart and the message takes a few more; under the measured CPU model each
     * rank's own MPI code is computation too, and on a loaded host it has taken 80 us more on
     * one rank than on the other between the barrier and its clock readings: 1 ms each way. */
    CHECK(seen >= wait - 1e-3 && seen <= wait + 1e-3, "the message sent after 100 ms was seen after %.9f s", seen);
}

int main(int argc, char** argv)
{
    check_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int updates = argc > 1 ? atoi(argv[1]) : 4096;
    double busy_wait = argc > 2 ? atof(argv[2]) : 1e-3;
    random_access(rank, size, updates);
    clock_spins(rank, busy_wait);
    probe_wait(rank, size);
    return check_finish("mpi_progress");
}
