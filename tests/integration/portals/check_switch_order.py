#!/usr/bin/env python3
"""Messages between two processes keep their order across network model switches
(docs/network-models.md, "What a switch changes"): switch_order.c's 64 KiB and 8 B puts in
turn, under a schedule that switches models every microsecond, land in the order they
were sent; so they do under each model alone.

usage: check_switch_order.py LAUNCHER SWITCH_ORDER_PROGRAM"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import alternating_models, environment, launch  # noqa: E402

COUNT = 400
PERIOD_NS = 1000  # shorter than a 64 KiB message's way (about 6 us), longer than a call
SPAN_NS = 2_000_000  # past the run's end (about 2.4 ms of 64 KiB messages, from 0.1 ms)

launcher, program = sys.argv[1], sys.argv[2]
schedule = alternating_models(PERIOD_NS, SPAN_NS // PERIOD_NS + 2000)
failures = []
for name, model in [("detailed", "detailed"), ("flow", "flow"), (f"switched every {PERIOD_NS} ns", schedule)]:
    done = launch(launcher, program, str(COUNT), ranks=2, options=["--network-model", model], env=environment(),
                  wall_timeout=180)
    ok = done.returncode == 0 and f"switch_order: {COUNT} in order" in done.stdout
    print(f"{name}: exit status {done.returncode}: {done.stdout.strip()}")
    if not ok:
        failures.append(f"{name}: exit status {done.returncode}: {done.stdout.strip()} {done.stderr[-600:]}")
if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print(f"ok: {COUNT} messages in order under each model and switched every {PERIOD_NS} ns")
