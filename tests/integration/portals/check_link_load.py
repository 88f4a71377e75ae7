#!/usr/bin/env python3
"""The links' utilisation in the timeline and the Paje file (docs/observability.md), for
the 2-rank Portals ping-pong on the built-in platform:

- every sample of every link lies in [0, 1] and every link ends at 0;
- the sender's and the receiver's BXI links are used: a lone message of the ping-pong
  saturates them, since SimGrid gives a lone flow bandwidth / 1.05 and charges its
  reverse route 5 % of it on the same link (tests/testkit/model.py, CROSS_TRAFFIC):
  a utilisation of 1;
- each node's shared PCIe link carries at least what a lone transfer gives it: the rate
  min(limiter, shared / 1.05) times 1.05, over the shared bandwidth;
- pj_dump reads the same samples from the Paje file;
- observing changes nothing: the ping-pong's one-way times are those of a run without
  --timeline and --paje."""
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.model import CROSS_TRAFFIC, Platform  # noqa: E402
from testkit.launch import launch  # noqa: E402

TOLERANCE = 1e-6
launcher, program = sys.argv[1], sys.argv[2]


def run(*options, cwd):
    result = launch(launcher, program, options=options, cwd=cwd)
    if result.returncode != 0:
        sys.exit(f"ping-pong failed with status {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return re.findall(r"size=\d+ iterations=\d+ one_way_ns=[\d.]+", result.stdout)


failures = []
with tempfile.TemporaryDirectory() as work:
    observed = run("--timeline", "run.json", "--paje", "run.paje", cwd=work)
    plain = run(cwd=work)
    if observed != plain or not plain:
        failures.append(f"observing changed the ping-pong: {observed} against {plain}")
    samples = defaultdict(list)
    for e in json.loads((Path(work) / "run.json").read_text())["traceEvents"]:
        if e["ph"] == "C" and e["name"].startswith("link "):
            samples[e["name"][len("link "):-len(" utilisation")]].append((e["ts"], e["args"]["utilisation"]))
    paje = defaultdict(list)
    if shutil.which("pj_dump"):
        dump = subprocess.run(["pj_dump", str(Path(work) / "run.paje")], capture_output=True, text=True, timeout=60)
        if dump.returncode != 0 or dump.stderr.strip():
            failures.append(f"pj_dump: status {dump.returncode}: {dump.stderr[-800:]}")
        for line in dump.stdout.splitlines():
            fields = [f.strip() for f in line.split(",")]
            if fields[0] == "Variable" and fields[2] == "utilisation":
                paje[fields[1]].append(float(fields[6]))
    else:
        failures.append("pj_dump is missing (Debian's pajeng: tools/setup installs it)")

p = Platform()
lone_pci = min(p.pcie["limiter_bandwidth"], p.pcie["shared_bandwidth"] / CROSS_TRAFFIC) * CROSS_TRAFFIC \
    / p.pcie["shared_bandwidth"]
expected_peaks = {"node0_BXI": (1.0, 1.0), "node1_BXI": (1.0, 1.0),
                  "node0_PCI": (lone_pci, 1.0), "node1_PCI": (lone_pci, 1.0)}
if not samples:
    failures.append("no link utilisation counter in the timeline")
for link, points in sorted(samples.items()):
    values = [v for _, v in points]
    if min(values) < 0 or max(values) > 1 + TOLERANCE:
        failures.append(f"{link}: utilisation from {min(values)} to {max(values)}, outside [0, 1]")
    if values[-1] != 0:
        failures.append(f"{link}: the last sample is {values[-1]}, not 0")
    if [t for t, _ in points] != sorted(t for t, _ in points):
        failures.append(f"{link}: samples out of the order of time")
    in_paje = sorted(paje.get(link, []))
    if paje and (len(in_paje) != len(values) or
                 any(abs(a - b) > TOLERANCE for a, b in zip(in_paje, sorted(values)))):
        failures.append(f"{link}: the Paje file has {len(in_paje)} samples, the timeline {len(values)}, or others")
for link, (low, high) in expected_peaks.items():
    peak = max((v for _, v in samples.get(link, [])), default=None)
    ok = peak is not None and low - TOLERANCE <= peak <= high + TOLERANCE
    print(f"{link:10s} peak utilisation {peak}, model {low:.6f} to {high:.6f}  {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{link}: peak utilisation {peak}, the model gives {low:.6f} to {high:.6f}")
if failures:
    sys.exit("\n".join(failures))
print(f"{len(samples)} links sampled, within [0, 1], peaks as the model says")
