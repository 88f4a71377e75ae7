#!/usr/bin/env python3
"""Waiting on memory under the zero CPU model (memory_waits.c): with --memory-waits on, a
rank that spins on its own memory sees each of three puts land, one simulated millisecond
apart, at the date it landed; three runs, one beside a CPU hog, print the same dates and
end at the same simulated times. With --memory-waits auto the rule is off for a program that
is not an OpenSHMEM program: the spin holds simulated time, and the run only ends at its
wall-clock timeout; the same program marked as an OpenSHMEM program (it defines
shmem_init, not exported) gets the rule under auto and prints the same dates."""
import json
import os
import re
import subprocess
import sys
import tempfile

launcher, program, shmem_program = sys.argv[1:4]


def run(memory_waits, timeout, summary_path, program=program):
    return subprocess.run([launcher, "-q", "-n", "2", "--cpu-model", "zero", "--memory-waits", memory_waits,
                           "--timeout", str(timeout), "--summary", summary_path, program],
                          capture_output=True, text=True, timeout=timeout + 30)


results = []
with tempfile.TemporaryDirectory() as d:
    for i in range(3):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if i == 2 else None
        try:
            summary_path = os.path.join(d, f"run{i}.json")
            result = run("on", 60, summary_path)
        finally:
            if hog:
                hog.kill()
                hog.wait()
        if result.returncode != 0:
            sys.exit(f"run {i}: status {result.returncode}\n{result.stdout}{result.stderr}")
        dates = [float(x) for x in re.findall(r"rank 0 saw \d at ([0-9.]+) s", result.stdout)]
        ends = [r["end_time"] for r in json.load(open(summary_path))["ranks"]]
        print(f"run {i}{' (beside a CPU hog)' if i == 2 else ''}: seen at {dates}, rank end times {ends}")
        results.append((dates, ends))
    dates = results[0][0]
    if len(dates) != 3 or any(b - a < 1e-3 for a, b in zip([0.0] + dates, dates)):
        sys.exit(f"each value must be seen at least 1 ms after the previous one: {dates}")
    if any(r != results[0] for r in results):
        sys.exit("the runs differ")
    off = run("auto", 5, os.path.join(d, "off.json"))
    if off.returncode != 124:
        sys.exit(f"--memory-waits auto on a Portals program: status {off.returncode}, expected the timeout's 124")
    shmem = run("auto", 60, os.path.join(d, "shmem.json"), shmem_program)
    shmem_dates = [float(x) for x in re.findall(r"rank 0 saw \d at ([0-9.]+) s", shmem.stdout)]
    if shmem.returncode != 0 or shmem_dates != dates:
        sys.exit(f"--memory-waits auto on an OpenSHMEM program: status {shmem.returncode}, dates {shmem_dates}\n"
                 f"{shmem.stderr}")
print("ok: the spinning rank sees each write at its date, the same in every run")
