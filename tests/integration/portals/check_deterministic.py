#!/usr/bin/env python3
"""Two runs of the same program under --cpu-model zero give byte-identical output and
identical simulated end times; the summary accounts for every simulated second of a rank."""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
outputs = []
with tempfile.TemporaryDirectory() as tmp:
    for i in range(2):
        summary = Path(tmp) / f"summary{i}.json"
        run = launch(launcher, program, summary=summary)
        if run.returncode != 0:
            sys.exit(f"run {i} failed ({run.returncode}): {run.stderr}")
        ranks = json.loads(summary.read_text())["ranks"]
        for r in ranks:  # with no compute, a rank's whole life is in Portals calls
            if r["compute_time"] != 0 or abs(r["portals_time"] + r["sleep_time"] - r["end_time"]) > 1e-12:
                sys.exit(f"rank {r['rank']}: compute {r['compute_time']} + Portals {r['portals_time']} + sleep "
                         f"{r['sleep_time']} does not make its end time {r['end_time']}")
        outputs.append((run.stdout, [(r["rank"], r["end_time"]) for r in ranks]))
if outputs[0] != outputs[1]:
    sys.exit("two runs differ:\n" + repr(outputs[0][1]) + "\n" + repr(outputs[1][1]))
print(f"identical output ({len(outputs[0][0].encode())} bytes) and end times {outputs[0][1]}")
