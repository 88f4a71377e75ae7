#!/usr/bin/env python3
"""A burst of Puts against the NIC command queue (appendix §3.5, §13): the CPU returns at
the PCIe command-write rate while queue slots remain, then is held at the TX engine's
rate. Expected return dates come from a queue model: a call takes a slot (or waits for
the oldest to be freed when the TX starts that command), writes its 64-byte command over
PCIe, and the TX spends 2 ns + 200 ns + one event write per inline Put."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import COMMAND, EVENT, SEND_PREPARATION, Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
run = launch(launcher, program, wall_timeout=60)
if run.returncode != 0:
    sys.exit(f"failed ({run.returncode}): {run.stderr}")
got = [int(t) for t in re.findall(r"return_ns=(\d+)", run.stdout)]
platform = Platform()
DEPTH = 16
command = platform.pci(COMMAND) * 1e9
tx = (SEND_PREPARATION + Platform.TX_AFTER_PUT_NO_DMA + platform.pci(EVENT)) * 1e9
expected, tx_start = [], []
t = 0.0
for k in range(len(got)):
    if k >= DEPTH:
        t = max(t, tx_start[k - DEPTH])  # wait for a free slot
    t += command
    expected.append(t)
    tx_start.append(max(t, tx_start[-1] + tx if tx_start else t))
# Commands and event writes share the PCIe bus: allow 1 % (the acceptance bound).
failures = [k for k, (g, e) in enumerate(zip(got, expected)) if abs(g - e) > max(1.0, 0.01 * e)]
for k, (g, e) in enumerate(zip(got, expected)):
    print(f"put {k:2d}: returned at {g:6d} ns, model {e:9.3f} ns{'  FAIL' if k in failures else ''}")
steady = got[-1] - got[-2]
print(f"interval at the end of the burst: {steady} ns (TX rate {tx:.3f} ns)")
if failures or abs(steady - tx) > 2:
    sys.exit("the burst does not follow the command-queue model")
