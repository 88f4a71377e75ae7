#!/usr/bin/env python3
"""Zero-model runs of SOS programs that wait on their memory (shmem_test in a loop, the
vector forms of wait_until, test_any) are identical from run to run: each program runs
three times on 2 and on 4 ranks, the last two beside a CPU hog, and every run must write
the same summary (less what depends on the host: wall time, pids, memory peaks) and print
the same lines (in any order: the ranks' outputs interleave as the host runs them). None
of these programs sleeps or waits for a retransmission: each must also end within 1 ms of
simulated time. Before the fix of docs/time.md "Waiting on memory" (the write into a
waiting rank's memory landed only after its CPU budget ran out again), shmem_test ended at
10 s in most runs and at 21 us in others: simulated time ran on to an E2E deadline while
the PE had not yet made the Portals call it made once it saw the write.
And bigput on 4 ranks, whose PEs fill two fresh 16 MiB arrays with no Portals call for
longer than the budget of a wait on memory: taken to wait while they computed, they ended
microseconds apart from run to run before the page-fault test of that rule.

usage: check_deterministic.py LAUNCHER [--sos PREFIX]
Exit status 0 (pass), 1 (fail) or 77 (SOS is not built: see run_shmem.py)."""
import subprocess
import sys
import tempfile
from pathlib import Path

from run_shmem import SKIP, check_setup, run_zero, verdict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit import run_summary  # noqa: E402
from testkit.run_summary import host_independent  # noqa: E402

# (program, rank counts, latest simulated end in seconds)
PROGRAMS = [("unit/shmem_test", [2, 4], 1e-3), ("unit/c11_test_shmem_wait_until_vector", [2, 4], 1e-3),
            ("spec-example/shmem_test_any", [2, 4], 1e-3), ("unit/bigput", [4], 0.5)]
RUNS = 3
HOGGED = (1, 2)  # runs beside a CPU hog


def main():
    setup = check_setup(sys.argv)
    if setup is None:
        return SKIP
    launcher, prefix = setup
    errors = []
    with tempfile.TemporaryDirectory(prefix="s4bxi-shmem-deterministic-") as work:
        for name, rank_counts, longest in PROGRAMS:
            program = prefix / "tests" / name
            for ranks in rank_counts:
                runs = []
                for i in range(RUNS):
                    summary_path = Path(work) / f"run{i}.json"
                    summary_path.unlink(missing_ok=True)
                    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if i in HOGGED else None
                    try:
                        done = run_zero(launcher, program, ranks, summary_path, work)
                    finally:
                        if hog:
                            hog.kill()
                            hog.wait()
                    summary = host_independent(summary_path)
                    makespan = summary.get("makespan") if summary else None
                    print(f"{name} on {ranks} ranks, run {i}{' (beside a CPU hog)' if i in HOGGED else ''}: "
                          f"exit {done.returncode}, simulated {makespan} s")
                    if done.returncode != 0 or summary is None:
                        errors.append(f"{name} on {ranks} ranks, run {i}: exit {done.returncode}\n{done.stderr[-2000:]}")
                        break
                    if makespan is None or makespan > longest:
                        errors.append(f"{name} on {ranks} ranks, run {i}: ended at {makespan} s of simulated time, "
                                      f"expected within {longest} s")
                    runs.append((summary, sorted(done.stdout.splitlines()), run_summary.load(summary_path)))
                for i, run in enumerate(runs[1:], 1):
                    if run[0] != runs[0][0]:
                        errors.append(f"{name} on {ranks} ranks: run {i} wrote another summary than run 0: "
                                      + run_summary.why_runs_differ(runs[0][2], run[2], most=20))
                    if run[1] != runs[0][1]:
                        errors.append(f"{name} on {ranks} ranks: run {i} printed other lines than run 0")
    return verdict(errors, f"{len(PROGRAMS)} programs on 2 and 4 ranks, {RUNS} runs each: identical")


if __name__ == "__main__":
    sys.exit(main())
