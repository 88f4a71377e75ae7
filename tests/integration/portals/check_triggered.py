#!/usr/bin/env python3
"""Triggered operations: checks from the program itself, and the round trip of a Put
answered by a triggered Put against the model: the answer leaves the target's NIC when
the question lands, with no event delivery, no CPU and no command write in between. And
the run's makespan is its last rank's end: the program's last messages leave E2E
retransmission deadlines armed when the run ends, which must not drag simulated time on
(they did, by the 10 s retry timeout)."""
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import COMMAND, SEND_PREPARATION, Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as scratch:
    summary_file = Path(scratch) / "summary.json"
    run = launch(launcher, program, summary=summary_file, wall_timeout=60)
    print(run.stdout)
    if run.returncode != 0:
        sys.exit(f"failed ({run.returncode}): {run.stderr}")
    summary = json.loads(summary_file.read_text())
last_end = max(rank["end_time"] for rank in summary["ranks"])
if abs(summary["makespan"] - last_end) > 1e-9:
    sys.exit(f"makespan {summary['makespan']} s, but the last rank ended at {last_end} s")
p = Platform()
SIZE = 8  # inline: no DMA on either side
question = p.pci(COMMAND) + SEND_PREPARATION + p.network(SIZE)
answer = SEND_PREPARATION + p.network(SIZE) + p.event_delivery()
expected = (question + answer) * 1e9
got = int(re.search(r"round_trip_ns=(\d+)", run.stdout).group(1))
if abs(got - expected) > 1.0:
    sys.exit(f"round trip {got} ns, model {expected:.3f} ns")
print(f"round trip {got} ns, model {expected:.3f} ns")
