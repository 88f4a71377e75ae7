#!/usr/bin/env python3
"""The flow-control experiment of the thesis, in miniature: two switches share a link; a
flooding pair (0 -> 2) and a measured pair (1 <-> 3, 64 KiB ping-pong) cross it. Tighter
in-flight limits on the flood (nic.max_inflight_to_target) leave more of the link to the
measured pair: its latency must fall as the limit tightens, and never below its latency on
an idle network (the model's formula). Prints the curve."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, program, platform_file = sys.argv[1:4]
SIZE = 65536


def measured(limit, flood_count=300):
    run = launch(launcher, program, SIZE, flood_count, SIZE, 20, ranks=4, options=("--platform", platform_file),
                 settings=[f"nic.max_inflight_to_target={limit}"], wall_timeout=300)
    if run.returncode != 0:
        sys.exit(f"limit {limit}: failed ({run.returncode}): {run.stderr}")
    return float(re.search(r"measured_one_way_ns=([\d.]+)", run.stdout).group(1))


idle = measured(0, flood_count=0)
# On an idle network, the one-way time of the measured pair is at least the put-to-event
# time of the model through one switch (the fat tree adds two switch-to-switch links).
floor = Platform(platform_file).put_to_target_event(SIZE) * 1e9
print(f"idle network: {idle:.1f} ns (one-switch model {floor:.1f} ns)")
curve = [(limit, measured(limit)) for limit in (0, 8, 4, 2, 1)]
for limit, latency in curve:
    print(f"in-flight limit {limit or 'none':>4}: measured pair one-way {latency:10.1f} ns")
latencies = [latency for _, latency in curve]
errors = []
if idle < floor:
    errors.append("the idle latency is below the model's")
if any(later > earlier * 1.001 for earlier, later in zip(latencies, latencies[1:])):
    errors.append("latency does not fall as the limit tightens")
if not latencies[-1] < 0.5 * latencies[0]:
    errors.append("the tightest limit does not at least halve the latency")
if any(latency < idle * 0.999 for latency in latencies):
    errors.append("the flood cannot make the measured pair faster than an idle network")
if errors:
    sys.exit("; ".join(errors))
