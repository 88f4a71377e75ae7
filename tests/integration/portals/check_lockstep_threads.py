#!/usr/bin/env python3
"""Threads of an OpenSHMEM rank in lockstep under the zero CPU model (lockstep_threads.c with
pthreads, lockstep_openmp.c with OpenMP; docs/time.md "Threads in lockstep"): four runs,
two of them beside a CPU hog, print the same lines (the digest of the old values the
threads got, in an order of the program's, and the simulated time the threads took) and
write the same summary but for what depends on the host (wall time, pids, memory peaks).
Without lockstep the threads reached the server in the order the host ran them: the digest
and the dates differed from run to run. Each run must add up (every fetch-add counted once).
With lockstep_threads, threads that spin for good on memory no write can reach end in a
deadlock report (status 11) after --deadlock-timeout, not in a hang.

A program that is not an OpenSHMEM one (joined_threads.c) runs with --lockstep on among
the launcher options given after it.

usage: check_lockstep_threads.py LAUNCHER PROGRAM [LAUNCHER_OPTION...]"""
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import run_summary  # noqa: E402
from testkit.launch import launch  # noqa: E402

launcher, program, options = sys.argv[1], sys.argv[2], sys.argv[3:]
PREFIX = Path(program).name + ":"  # the lines the program prints
RUNS = 4
HOGGED = (1, 2)  # runs beside a CPU hog


runs = []
with tempfile.TemporaryDirectory() as scratch:
    for run in range(RUNS):
        summary_path = Path(scratch) / f"run{run}.json"
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if run in HOGGED else None
        try:
            done = launch(launcher, program, timeout=90, options=options, summary=summary_path, wall_timeout=150)
        finally:
            if hog:
                hog.kill()
                hog.wait()
        lines = sorted(line for line in done.stdout.splitlines() if line.startswith(PREFIX))
        print(f"run {run}{' (beside a CPU hog)' if run in HOGGED else ''}: status {done.returncode}")
        for line in lines:
            print("  " + line)
        if done.returncode != 0 or len(lines) != 2 or not all(line.endswith(" ok") for line in lines):
            sys.exit(f"FAIL: run {run}: status {done.returncode}, lines {lines}\n{done.stderr[-3000:]}")
        runs.append((lines, run_summary.load(summary_path)))

first_lines, first_summary = runs[0]
failures = []
for run, (lines, summary) in enumerate(runs[1:], 1):
    if lines != first_lines:
        failures.append(f"run {run} printed other lines than run 0: {lines} against {first_lines}")
    if run_summary.simulated_part(summary) != run_summary.simulated_part(first_summary):
        failures.append(f"run {run} wrote another summary than run 0: "
                        + run_summary.why_runs_differ(first_summary, summary))
if PREFIX == "lockstep_threads:":
    # Threads that spin for good, with nothing under way in the simulation: a deadlock,
    # reported after the deadlock timeout, not a hang.
    done = launch(launcher, program, "spin-forever", timeout=60, options=("--deadlock-timeout", 2))
    print(f"spin-forever: status {done.returncode}")
    if done.returncode != 11 or "have spun on its memory" not in done.stderr:
        failures.append(f"spin-forever: status {done.returncode} (expected 11, a deadlock), stderr:\n"
                        f"{done.stderr[-2000:]}")
if failures:
    sys.exit("FAIL:\n" + "\n".join(failures))
print(f"ok: {RUNS} runs, {len(HOGGED)} beside a CPU hog, the same lines and the same summary")
