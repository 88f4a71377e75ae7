#!/usr/bin/env python3
"""A rank blocked outside the simulation (FIFO read) lets simulated time advance for the
others and resumes at the date its peer unblocked it: exactly the 2 s of the peer's
simulated sleep under --cpu-model zero."""
import os
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    run = launch(launcher, program, fifo, wall_timeout=60)
if run.returncode != 0:
    sys.exit(f"failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
match = re.search(r"resumed at ([\d.]+)", run.stdout)
if not match:
    sys.exit("no resume date printed:\n" + run.stdout)
resumed = float(match.group(1))
SLEEP = 2.0
if abs(resumed - SLEEP) > 1e-9:
    sys.exit(f"rank 1 resumed at {resumed} s, expected {SLEEP} s")
print(f"rank 1 resumed at {resumed} s")
