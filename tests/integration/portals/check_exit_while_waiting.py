#!/usr/bin/env python3
"""A rank whose helper thread calls exit(3) while the simulated thread waits in PtlEQWait
(exit_while_waiting.c): the launcher exits with status 3 and the run summary shows every
rank finished and the simulation ok (before, the rank stayed "waiting in the simulation"
and the run ended in a deadlock report)."""
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as d:
    summary_path = os.path.join(d, "run.json")
    run = launch(launcher, program, os.path.join(d, "rank0.pid"), timeout=60, summary=summary_path, wall_timeout=90)
    print(run.stdout, run.stderr)
    summary = json.load(open(summary_path))
if run.returncode != 3:
    sys.exit(f"launcher exit status {run.returncode}, expected 3 (the rank's)")
if summary["status"] != "ok" or not all(r["finished"] for r in summary["ranks"]):
    sys.exit(f"summary status {summary['status']}, finished {[r['finished'] for r in summary['ranks']]}")
print("ok: the rank that exited from a helper thread finished with its status")
