#!/usr/bin/env python3
"""Both ranks sending at once (mpi_pingping.c, IMB's PingPing) under --cpu-model zero: each
rank's time per iteration is its Put's ACK date (testkit/model.py put_timeline), in step
or not.

In step, each message finds its receive posted and each rank's MPI_Wait ends on its ACK.
Out of step (rank 1 starting 1 or 3 us later), the rank ahead sends a message that lands
unexpected and is ACKed one event write sooner, but waits for the other's message; the
offset settles where both periods are the slower rank's ACK date again. A poll of another
of Open MPI's queues that began a few ns before that ACK was visible once held the rank a
whole polling step: 7.0 us per iteration at 0-8 B out of step, 3.5 us at 16 B
(docs/model.md, Polling).

usage: check_mpi_pingping.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit import model  # noqa: E402
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
ITERATIONS = 200
SIZES = (8, 16)  # the inline Put's last size, the first read by DMA
SKEWS_NS = (0, 1000, 3000)
# The start of an out-of-step run (up to the skew, 3 us, over 200 iterations) is 1.5 %
# of an iteration at most; the steady state is exact.
TOLERANCE = 0.02
LINE = re.compile(r"rank (\d): ([\d.]+) us per iteration")


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_pingping"
    skip = why_skip(argv, program, launcher)
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    platform = model.Platform()
    errors = []
    for size in SIZES:
        predicted = platform.put_timeline(size)["ACK"] * 1e6
        for skew in SKEWS_NS:
            run = launch(launcher, program, str(size), str(ITERATIONS), str(skew), ranks=2, mpirun=True,
                         cpu_model="zero", timeout=120, wall_timeout=180, env=launch_environment())
            figures = {int(rank): float(us) for rank, us in LINE.findall(run.stdout)}
            print(f"{size:>3} B, rank 1 {skew:>4} ns late: {figures} us per iteration, predicted {predicted:.4f}",
                  flush=True)
            if run.returncode != 0 or len(figures) != 2:
                errors.append(f"{size} B, skew {skew} ns: exit status {run.returncode}: {run.stderr[-1500:]}")
                continue
            for rank, us in sorted(figures.items()):
                if abs(us / predicted - 1) > TOLERANCE:
                    errors.append(f"{size} B, skew {skew} ns, rank {rank}: {us} us per iteration, "
                                  f"predicted {predicted:.4f}")
    return verdict(errors, program.name, "every rank's iteration is its Put's ACK date, in step or not")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
