#!/usr/bin/env python3
"""Triggered operations: checks from the program itself, and the round trip of a Put
answered by a triggered Put against the model: the answer leaves the target's NIC when
the question lands, with no event delivery, no CPU and no command write in between."""
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from model import COMMAND, SEND_PREPARATION, Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
run = subprocess.run([launcher, "-q", "-n", "2", "--cpu-model", "zero", program], capture_output=True, text=True,
                     timeout=60)
print(run.stdout)
if run.returncode != 0:
    sys.exit(f"failed ({run.returncode}): {run.stderr}")
p = Platform()
SIZE = 8  # inline: no DMA on either side
question = p.pci(COMMAND) + SEND_PREPARATION + p.network(SIZE)
answer = SEND_PREPARATION + p.network(SIZE) + p.event_delivery()
expected = (question + answer) * 1e9
got = int(re.search(r"round_trip_ns=(\d+)", run.stdout).group(1))
if abs(got - expected) > 1.0:
    sys.exit(f"round trip {got} ns, model {expected:.3f} ns")
print(f"round trip {got} ns, model {expected:.3f} ns")
