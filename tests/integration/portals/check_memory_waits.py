#!/usr/bin/env python3
"""Waiting on memory under the zero CPU model (memory_waits.c): with --memory-waits on, a
rank that spins on its own memory sees each of four puts land, one simulated millisecond
apart, at the date it landed, and the Portals calls it makes right after end at that date
plus their own cost (well under the writer's next millisecond). It spins by plain reads
(no OpenSHMEM wait call), so each wait counts as one by plain reads. Between the third and
the fourth it computes 20 ms of CPU over memory it has touched, with no call, while the
fourth is on its way: that is not taken for a wait (the budget of plain reads is longer),
and its next calls end at the third's date plus their cost. Four runs, two of them beside
a CPU hog, print the same dates and write the same summary, but for what depends on the
host (wall time, pids, memory peaks). With --memory-waits auto the rule is off for a
program that is not an OpenSHMEM program: the spin holds simulated time, and the run only
ends at its wall-clock timeout; the same program marked as an OpenSHMEM program (it
defines shmem_init, not exported) gets the rule under auto and prints the same dates."""
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import run_summary  # noqa: E402
from testkit.launch import launch  # noqa: E402

launcher, program, shmem_program = sys.argv[1:4]
SEEN = re.compile(r"rank 0 saw \d at ([0-9.]+) s, its next calls ended at ([0-9.]+) s")
COMPUTED = re.compile(r"rank 0 computed \d+ ms of CPU from ([0-9.]+) s \(sum \d+\), its next calls ended at ([0-9.]+) s")
VALUES = 4
RUNS = 4
HOGGED = (2, 3)  # runs beside a CPU hog


def run(memory_waits, timeout, summary_path, program=program):
    return launch(launcher, program, timeout=timeout, options=("--memory-waits", memory_waits),
                  summary=summary_path, wall_timeout=timeout + 30)


def simulated(summary):
    """The summary without what depends on the host."""
    return json.dumps(run_summary.simulated_part(summary), sort_keys=True, indent=1)


results = []
with tempfile.TemporaryDirectory() as d:
    for i in range(RUNS):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if i in HOGGED else None
        try:
            summary_path = os.path.join(d, f"run{i}.json")
            result = run("on", 60, summary_path)
        finally:
            if hog:
                hog.kill()
                hog.wait()
        if result.returncode != 0:
            sys.exit(f"run {i}: status {result.returncode}\n{result.stdout}{result.stderr}")
        seen = [(float(a), float(b)) for a, b in SEEN.findall(result.stdout)]
        whole = run_summary.load(summary_path)
        summary = simulated(whole)
        ends = [r["end_time"] for r in whole["ranks"]]
        print(f"run {i}{' (beside a CPU hog)' if i in HOGGED else ''}: seen at, next calls ended at {seen}; "
              f"rank end times {ends}; host decisions: {run_summary.host_decisions(whole)}")
        # The reader waits for each of the puts, spinning: simulated time can only reach the
        # next one once the rule has taken it to wait on its memory, by plain reads.
        decisions = whole["host_decisions"]
        if decisions["memory_waits"] < VALUES or decisions["memory_waits_by_reads"] != decisions["memory_waits"]:
            sys.exit(f"run {i}: the rank was taken to wait on its memory {decisions['memory_waits']} times, "
                     f"{decisions['memory_waits_by_reads']} by plain reads: expected {VALUES} at least, all by reads")
        # Computing is not waiting: taken to wait, the rank's next calls would end at the
        # fourth put's date, 1 ms later.
        computed = [(float(a), float(b)) for a, b in COMPUTED.findall(result.stdout)]
        if len(computed) != 1 or not 0 <= computed[0][1] - computed[0][0] < 100e-6:
            sys.exit(f"run {i}: the calls after 20 ms of CPU with no call must end within 100 us of its "
                     f"start: {computed}\n{result.stdout}")
        results.append((seen, summary, whole))
    seen = results[0][0]
    dates = [a for a, _ in seen]
    if len(dates) != VALUES or any(b - a < 1e-3 for a, b in zip([0.0] + dates, dates)):
        sys.exit(f"each value must be seen at least 1 ms after the previous one: {dates}")
    # Two Portals calls cost about 0.5 us of simulated time; simulated time running on
    # without the rank while it had seen the write would take it to the writer's next put.
    late = [(a, b) for a, b in seen if not 0 <= b - a < 100e-6]
    if late:
        sys.exit(f"the calls made right after a write was seen must end within 100 us of it: {late}")
    for i, (other_seen, other_summary, other_whole) in enumerate(results[1:], 1):
        if other_seen != seen:
            sys.exit(f"run {i} printed other dates than run 0: {other_seen} / {seen}")
        if other_summary != results[0][1]:
            sys.exit(f"run {i} wrote another summary than run 0: "
                     + run_summary.why_runs_differ(results[0][2], other_whole))
    off = run("auto", 5, os.path.join(d, "off.json"))
    if off.returncode != 124:
        sys.exit(f"--memory-waits auto on a Portals program: status {off.returncode}, expected the timeout's 124")
    shmem = run("auto", 60, os.path.join(d, "shmem.json"), shmem_program)
    shmem_seen = [(float(a), float(b)) for a, b in SEEN.findall(shmem.stdout)]
    if shmem.returncode != 0 or shmem_seen != seen:
        sys.exit(f"--memory-waits auto on an OpenSHMEM program: status {shmem.returncode}, dates {shmem_seen}\n"
                 f"{shmem.stderr}")
print("ok: the spinning rank sees each write at its date and calls right then, the same in every run")
