#!/usr/bin/env python3
"""Busy polling costs what blocking costs: a program run with a polling mode (the ping-pong
polling PtlEQGet or PtlEQPoll with a zero timeout, ct_polling looping on PtlCTGet) prints
what its blocking version prints under --cpu-model zero (empty polls fast-forward to the
next event instead of spinning), the same lines with the same numbers to within SimGrid's
timing precision: 1 ns per printed time (the deadlines of empty polls are events of their
own, and an event in the middle of a transfer rounds its remaining time to that precision).
usage: check_polling.py LAUNCHER PROGRAM MODE..."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

PRECISION_NS = 1.0  # SimGrid's precision/timing (1e-9 s)
NUMBER = re.compile(r"[0-9]+(?:\.[0-9]+)?")

launcher, program, modes = sys.argv[1], sys.argv[2], sys.argv[3:]


def run(*mode):
    done = launch(launcher, program, *mode)
    if done.returncode != 0:
        sys.exit(f"{mode or 'wait'} failed ({done.returncode}): {done.stderr}")
    return done.stdout, done.wall


def same_within_precision(polling, blocking):
    """Same lines, text and numbers, but for time values (in ns) within PRECISION_NS."""
    lines_p, lines_b = polling.splitlines(), blocking.splitlines()
    if len(lines_p) != len(lines_b) or not lines_b:
        return False
    for p, b in zip(lines_p, lines_b):
        if NUMBER.sub("#", p) != NUMBER.sub("#", b):
            return False
        for x, y in zip(NUMBER.findall(p), NUMBER.findall(b)):
            if abs(float(x) - float(y)) > PRECISION_NS:
                return False
    return True


blocking, _ = run()
for mode in modes:
    polling, wall = run(mode)
    if not same_within_precision(polling, blocking):
        sys.exit(f"{mode}: latencies differ from PtlEQWait's:\n{polling}\nvs\n{blocking}")
    print(f"{mode}: same latencies as PtlEQWait, to {PRECISION_NS:g} ns ({wall:.2f} s of wall time)")
