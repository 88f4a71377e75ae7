#!/usr/bin/env python3
"""The model's knobs change timelines as the model says (appendix §6, §7.2, §9.1): quick
ACKs, PCIe modelling off, E2E off, and E2E retransmissions with a tiny retry timeout.
Expected dates come from tests/testkit/model.py; where the model's own transfers share
a link (large payloads overlapping retransmissions or event writes), the bound is 1 %."""
import json
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.model import Platform  # noqa: E402
from testkit.launch import launch  # noqa: E402

launcher, timeline_program = sys.argv[1], sys.argv[2]
p = Platform()
M = 1 << 20
failures = []


def run(*settings, cases=(), summary=None):
    done = launch(launcher, timeline_program, *cases, settings=settings, summary=summary)
    if done.returncode != 0:
        sys.exit(f"{settings}: failed ({done.returncode}): {done.stderr}")
    steps = defaultdict(dict)
    for case, step, t in re.findall(r"case=(\S+) step=(\S+) t=(\d+)", done.stdout):
        steps[case][step] = int(t)
    return steps


def check(label, steps, case, step, model_seconds, relative=None):
    got = steps[case][step] - steps[case]["call"]
    want = model_seconds * 1e9
    tolerance = want * relative if relative else 1.0  # clock reads are whole nanoseconds
    ok = abs(got - want) <= tolerance
    print(f"{label:14s} {case:8s} {step:12s} {got:10d} ns  model {want:12.3f} ns  {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{label} {case} {step}")


steps = run("nic.quick_acks=true")
for case, size in (("put8", 8), ("put64", 64), ("put512", 512)):
    for step, date in p.put_timeline_quick_acks(size).items():
        check("quick ACKs", steps, case, step, date)

steps = run("nic.model_pci=false")
for case, size in (("put8", 8), ("put64", 64), ("put65", 65), ("put1M", M)):
    for step, date in p.put_timeline_no_pci(size).items():
        check("no PCIe model", steps, case, step, date)

steps = run("nic.e2e=false")
check("E2E off", steps, "get8", "GET", p.get_event_without_e2e(8))
check("E2E off", steps, "fetch8", "FETCH_ATOMIC", p.get_event_without_e2e(8, fetch_atomic=True))
check("E2E off", steps, "get1M", "GET", p.get_event_without_e2e(M), relative=0.01)
for step, date in p.put_timeline(8).items():  # nothing else changes for a put
    check("E2E off", steps, "put8", step, date)

# A retry timeout shorter than a 1 MiB round trip: the NIC sends the Put again until it is
# acknowledged; the data lands once, and the program sees the dates of the first copy,
# delayed by the copies that share the links with it.
with tempfile.TemporaryDirectory() as tmp:
    summary = Path(tmp) / "summary.json"
    steps = run("nic.retry_timeout=5e-6", cases=["put1M"], summary=str(summary))
    retransmissions = json.loads(summary.read_text())["retransmissions"]
    expected = p.put_timeline(M)
    for step in ("PUT", "SEND", "ACK"):
        got = (steps["put1M"][step] - steps["put1M"]["call"]) * 1e-9
        ok = expected[step] <= got <= expected[step] * 1.05
        print(f"retries        put1M    {step:12s} {got * 1e9:10.0f} ns  without retries {expected[step] * 1e9:12.3f} ns"
              f"  {'ok' if ok else 'FAIL'}")
        if not ok:
            failures.append(f"retries put1M {step}")
    # Retransmissions are paced by the TX engine (each copy is read again by DMA): at least
    # one, at most max_retries (5).
    print(f"retransmissions: {retransmissions}")
    if not 1 <= retransmissions <= 5:
        failures.append(f"expected 1 to 5 retransmissions of the 1 MiB Put, the summary says {retransmissions}")

if failures:
    sys.exit("off the model: " + ", ".join(failures))
print("every knob changes the timeline as the model says")
