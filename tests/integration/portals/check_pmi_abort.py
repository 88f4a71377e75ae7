#!/usr/bin/env python3
"""PMI_Abort ends every rank at once: 4 ranks, rank 1 aborts with status 7 (then 0, and
then rank 3 with 255) while the others wait in PMI_Barrier. The launcher exits with the
status the rank gave, well before any deadlock check could fire, its error output names
the rank and PMI_Abort in one line, no rank leaves the barrier, and the summary says
"abort"."""
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
errors = []
for status, aborter in ((7, 1), (0, 1), (255, 3)):
    with tempfile.TemporaryDirectory() as d:
        summary_path = os.path.join(d, "run.json")
        run = launch(launcher, program, status, aborter, ranks=4, timeout=100, summary=summary_path)
        wall = run.wall
        summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    lines = [line for line in run.stderr.splitlines() if "PMI_Abort(" in line and f"rank {aborter} " in line]
    what = f"PMI_Abort({status}) from rank {aborter}"
    print(f"{what}: status {run.returncode} after {wall:.1f} s; summary {summary.get('status')}")
    if run.returncode != status:
        errors.append(f"{what}: launcher exit status {run.returncode}, expected {status}")
    if wall > 8:  # the deadlock checks take 10 s and more
        errors.append(f"{what}: the run took {wall:.1f} s")
    if not any("simkernel" in line for line in lines):
        errors.append(f"{what}: no one-line diagnosis naming the rank and PMI_Abort")
    if "left the barrier" in run.stdout:
        errors.append(f"{what}: a rank left the barrier")
    if summary.get("status") != "abort" or summary.get("abort_status") != status:
        errors.append(f"{what}: summary status {summary.get('status')}, abort_status {summary.get('abort_status')}")
    if errors:
        print(run.stdout, run.stderr)
if errors:
    sys.exit("\n".join(errors))
print("ok: PMI_Abort ends the run with its status and names the rank")
