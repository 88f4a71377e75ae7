#!/usr/bin/env python3
"""Two runs of the same program under --cpu-model zero give byte-identical output and
identical simulated end times."""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

launcher, program = sys.argv[1], sys.argv[2]
outputs = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(2):
        summary = Path(tmp) / f"summary{i}.json"
        run = subprocess.run([launcher, "-q", "-n", "2", "--cpu-model", "zero", "--summary", str(summary), program],
                             capture_output=True, timeout=120)
        if run.returncode != 0:
            sys.exit(f"run {i} failed ({run.returncode}): {run.stderr.decode()}")
        ranks = json.loads(summary.read_text())["ranks"]
        outputs.append((run.stdout, [(r["rank"], r["end_time"]) for r in ranks]))
if outputs[0] != outputs[1]:
    sys.exit("two runs differ:\n" + repr(outputs[0][1]) + "\n" + repr(outputs[1][1]))
print(f"identical output ({len(outputs[0][0])} bytes) and end times {outputs[0][1]}")
