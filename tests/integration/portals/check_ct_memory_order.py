#!/usr/bin/env python3
"""A counted Put's bytes are in memory when its count is visible, under load: runs
ct_memory_order (PtlCTGet, read the word, PtlCTPoll/PtlCTWait for one more, as OpenSHMEM's
shmem_wait_until) RUNS times under the measured CPU model with a CPU hog on every core
beside it, so that ranks are descheduled at any point of the sequence; every other run
with a progress thread on each rank polling a counter meanwhile (its requests share the
rank's channel: one served twice answered another thread's next request, and the run
died or hung). Any run that hangs (a count visible before its bytes, or a delivered
count the target never sees) or fails fails the test.

usage: check_ct_memory_order.py LAUNCHER PROGRAM [RUNS [ROUNDS]]"""
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
rounds = sys.argv[4] if len(sys.argv) > 4 else "1000"
hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 2)]
failures = []
try:
    for run in range(1, runs + 1):
        try:
            progress = ["progress"] if run % 2 == 0 else []
            done = launch(launcher, program, rounds, *progress, cpu_model="measured", timeout=60)
            if done.returncode != 0:
                failures.append(f"run {run}{' (progress thread)' if progress else ''} "
                                f"(exit status {done.returncode}):\n{done.stdout}{done.stderr}")
        except subprocess.TimeoutExpired:
            failures.append(f"run {run}: no end after 120 s")
finally:
    for hog in hogs:
        hog.kill()
        hog.wait()
if failures:
    sys.exit("FAIL: " + "\n".join(failures))
print(f"ok: {runs} runs of {rounds} counted Puts beside {len(hogs)} CPU hogs ({runs // 2} with a progress thread)")
