#!/usr/bin/env python3
"""Busy polling costs what blocking costs: a program run with a polling mode (the ping-pong
polling PtlEQGet or PtlEQPoll with a zero timeout, ct_polling looping on PtlCTGet) prints
exactly what its blocking version prints under --cpu-model zero (empty polls fast-forward
to the next event instead of spinning). usage: check_polling.py LAUNCHER PROGRAM MODE..."""
import subprocess
import sys
import time

launcher, program, modes = sys.argv[1], sys.argv[2], sys.argv[3:]


def run(*mode):
    start = time.monotonic()
    done = subprocess.run([launcher, "-q", "-n", "2", "--cpu-model", "zero", program, *mode], capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"{mode or 'wait'} failed ({done.returncode}): {done.stderr}")
    return done.stdout, time.monotonic() - start


blocking, _ = run()
for mode in modes:
    polling, wall = run(mode)
    if polling != blocking:
        sys.exit(f"{mode}: latencies differ from PtlEQWait's:\n{polling}\nvs\n{blocking}")
    print(f"{mode}: same latencies as PtlEQWait ({wall:.2f} s of wall time)")
