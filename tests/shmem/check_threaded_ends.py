#!/usr/bin/env python3
"""SOS's mt_membar (two threads per PE waiting on each other's writes, atomics into the
PE's own memory, a lock across PEs, barriers, while the main thread joins them) ends at
its own date: 8 zero-model runs on 2 ranks, each within 0.1 s of simulated time (it takes
about 2 ms) and with no retransmission. With the main thread waiting outside the
simulation, the server sleeps in simulated time until the next event; that event was at
times the E2E retransmission deadline (10 s on) of a message whose acknowledgement landed
at that same instant, which withdrew the deadline without moving the clock, and the
server's own wake-up became the next event: 2 or 3 runs in 12 ended at 10 s
(docs/time.md "On which threads").

usage: check_threaded_ends.py LAUNCHER [--sos PREFIX]
Exit status 0 (pass), 1 (fail) or 77 (SOS is not built: see run_shmem.py)."""
import sys
import tempfile
from pathlib import Path

from run_shmem import SKIP, check_setup, run_zero, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.run_summary import host_independent  # noqa: E402

PROGRAM = "unit/mt_membar"
RUNS = 8
LONGEST = 0.1  # simulated seconds


def main():
    setup = check_setup(sys.argv)
    if setup is None:
        return SKIP
    launcher, prefix = setup
    errors = []
    with tempfile.TemporaryDirectory(prefix="s4bxi-shmem-threaded-") as work:
        for i in range(RUNS):
            summary_path = Path(work) / f"run{i}.json"
            done = run_zero(launcher, prefix / "tests" / PROGRAM, 2, summary_path, work)
            summary = host_independent(summary_path) or {}
            makespan, retransmissions = summary.get("makespan"), summary.get("retransmissions")
            print(f"{PROGRAM} run {i}: exit {done.returncode}, simulated {makespan} s, "
                  f"{retransmissions} retransmissions")
            if done.returncode != 0 or makespan is None:
                errors.append(f"run {i}: exit {done.returncode}\n{done.stderr[-2000:]}")
            elif makespan > LONGEST or retransmissions:
                errors.append(f"run {i}: ended at {makespan} s of simulated time with {retransmissions} "
                              f"retransmissions, expected within {LONGEST} s and none")
    return verdict(errors, f"{PROGRAM}: {RUNS} runs, each within {LONGEST} s")


if __name__ == "__main__":
    sys.exit(main())
