#!/usr/bin/env python3
"""Single Put/Get/Atomic operations: every step's simulated date against the model
(tests/testkit/model.py). Where the model's own transfers share the PCIe bus (large
responses overlapping their event write), the bound is 1 % as in the acceptance table."""
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import steps as timeline_steps  # noqa: E402
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
run = launch(launcher, program)
if run.returncode != 0:
    sys.exit(f"timeline failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
steps = timeline_steps.parse(run.stdout)

p = Platform()
M = 1 << 20
expected = {
    "put8": p.put_timeline(8), "put16vol": p.put_timeline(16, True), "put64": p.put_timeline(64),
    "put64vol": p.put_timeline(64, True), "put65": p.put_timeline(65), "put408vol": p.put_timeline(408, True),
    "put409vol": p.put_timeline(409, True), "put512": p.put_timeline(512), "put1M": p.put_timeline(M),
    "get8": p.get_timeline(8), "get512": p.get_timeline(512), "get1M": p.get_timeline(M),
    "atomic8": p.atomic_timeline(8),
    "fetch8": p.get_timeline(8, fetch_atomic=True), "swap8": p.get_timeline(8, fetch_atomic=True),
}
bus_shared = {("get1M", "REPLY"), ("get1M", "GET")}
failures = timeline_steps.compare(expected, steps,
                                  lambda case, step, want: want * 0.01 if (case, step) in bus_shared else 1.0)
if "atomic_result=10" not in run.stdout:
    failures.append("atomic SUM, fetch-atomic SUM and a failing CSWAP did not leave 10 in the target")
if "fetched=5 swap_fetched=10" not in run.stdout:
    failures.append("fetch-atomic and swap did not fetch the old values 5 and 10")

# The trace of an 8-byte atomic: the target NIC's payload write into memory is a row as long
# as one 8-byte PCIe transfer, although the NIC writes the event before waiting for it (other
# payload writes of the run are smaller).
PCI_PAYLOAD_WRITE = 11
with tempfile.TemporaryDirectory() as folder:
    traced = launch(launcher, program, "atomic8", options=("--trace", folder))
    rows = [line.split(",") for f in sorted(Path(folder).glob("log_*.csv")) for line in f.read_text().splitlines()[1:]]
writes = [float(end) - float(start) for op, initiator, target, start, end in rows
          if int(op) == PCI_PAYLOAD_WRITE and initiator == target == "1"]
want = p.pci(8)
if traced.returncode != 0 or not writes or abs(max(writes) - want) > 1e-12:
    failures.append(f"trace of atomic8: payload write rows {writes} s, the longest should be one 8-byte "
                    f"transfer, {want} s (status {traced.returncode})")
else:
    print(f"trace: atomic8 payload write {max(writes) * 1e9:.3f} ns  model {want * 1e9:.3f} ns  ok")
if failures:
    sys.exit("\n".join(failures))
print("every step follows the model")
