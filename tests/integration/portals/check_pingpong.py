#!/usr/bin/env python3
"""Runs the Portals put ping-pong through s4bxi-launch and checks its virtual one-way
latencies against the model (tests/testkit/model.py), on the built-in platform or on
the platform file given as third argument."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
platform_file = sys.argv[3] if len(sys.argv) > 3 else None
options = ["--platform", platform_file] if platform_file else []
run = launch(launcher, program, options=options)
if run.returncode != 0:
    sys.exit(f"ping-pong failed with status {run.returncode}:\n{run.stdout}\n{run.stderr}")
measured = {int(m[1]): float(m[2]) for m in re.finditer(r"size=(\d+) iterations=\d+ one_way_ns=([\d.]+)", run.stdout)}
sizes = [8 << i for i in range(18)]
if sorted(measured) != sizes:
    sys.exit(f"expected sizes {sizes}, got {sorted(measured)}")

platform = Platform(platform_file)
failures = []
CLOCK_RESOLUTION_NS = 1.0  # clock_gettime reports whole nanoseconds
for size in sizes:
    expected = platform.put_to_target_event(size) * 1e9
    got = measured[size]
    # Once the target's payload write overlaps the reply's PCIe transfers (above a few
    # hundred bytes), sharing the bus can delay the reply by at most that write's time.
    payload_write = size / platform.pcie["limiter_bandwidth"] * 1e9
    exact = platform.first_packet_wait(size) + size / platform.pcie["limiter_bandwidth"] <= platform.pci_latency()
    upper = expected + CLOCK_RESOLUTION_NS + (0 if exact else payload_write)
    ok = expected - CLOCK_RESOLUTION_NS <= got <= upper
    print(f"size {size:8d}: one-way {got:12.3f} ns, model {expected:12.3f} ns{'' if exact else ' (+ bus sharing)'}"
          f" {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(size)
if failures:
    sys.exit(f"one-way latency off the model for sizes {failures}")
print("ping-pong latencies follow the model")
