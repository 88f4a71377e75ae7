#!/usr/bin/env python3
"""Integration cases of virtual time, host identity, the direct-syscall trap and crash
reports: the programs of this folder run through s4bxi-launch.

usage: time_cases.py LAUNCHER PROGRAM_DIR CASE

Expected values are derived from what the programs do (a 5 s sleep is 5 s of simulated
time in the zero CPU model); the programs check their own clocks and exit non-zero when
something is off, this script checks exit statuses, messages and run summaries.
"""

import json
import os
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.cases import check, run_case  # noqa: E402
from testkit.launch import command, environment, run  # noqa: E402

LAUNCHER, PROGRAM_DIR, CASE = sys.argv[1], sys.argv[2], sys.argv[3]


def program(name):
    return os.path.join(PROGRAM_DIR, name)


class Result:
    def __init__(self, status, stdout, stderr, summary):
        self.status, self.stdout, self.stderr, self.summary = status, stdout, stderr, summary

    def __repr__(self):
        return f"status {self.status}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}---"


def launch(args, timeout=120):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        proc = run(command(LAUNCHER, *args, ranks=None, cpu_model=None, summary=path), wall_timeout=timeout,
                   env=environment())
        summary = None
        if os.path.exists(path):
            with open(path) as f:
                summary = json.load(f)
    result = Result(proc.returncode, proc.stdout, proc.stderr, summary)
    print(repr(result))
    return result


def expect_status(r, status):
    check(r.status == status, f"expected exit status {status}, got {r.status}")


def rank_end_times(r):
    check(r.summary is not None, "no run summary")
    ranks = sorted(r.summary.get("ranks", []), key=lambda x: x["rank"])
    return [x["end_time"] for x in ranks]


# --- cases --------------------------------------------------------------------------------

def case_calibrated_cpu_factor():
    """A factor from --calibrate makes the reference kernel's F flops last F / core_speed."""
    core_speed = 2e9

    def calibrate():
        out = run([LAUNCHER, "--calibrate", "--set", f"platform.core_speed={core_speed:g}"], env=environment())
        print(out.stdout, out.stderr)
        check(out.returncode == 0, f"--calibrate exited {out.returncode}")
        line = next((l for l in out.stdout.splitlines() if l.startswith("cpu factor")), None)
        check(line is not None, "--calibrate printed no cpu factor")
        factor = float(line.split()[2])
        host = float(next(l for l in out.stdout.splitlines() if l.startswith("host core")).split()[2])
        check(abs(factor - host / core_speed) <= 1e-3 * factor, f"factor {factor} is not {host} / {core_speed}")
        return factor

    # The host's other work makes a measured computation longer, never shorter, and a
    # shared host runs at another speed from one second to the next: each try calibrates
    # right before it measures, and the best of a few tries counts (docs/time.md "What is
    # charged as compute").
    errors = []
    for _ in range(3):
        factor = calibrate()
        r = launch(["--cpu-factor", repr(factor), "--set", f"platform.core_speed={core_speed:g}", "-n", "1",
                    program("reference_kernel"), "20000000"])
        expect_status(r, 0)
        words = r.stdout.split()
        flops, seconds = float(words[1]), float(words[3])
        expected = flops / core_speed
        errors.append(abs(seconds - expected) / expected)
        print(f"charged {seconds:.6f} s for {flops:g} flops, expected {expected:.6f} s")
        if errors[-1] <= 0.10:
            return
    check(False, f"charged times off by {[f'{e:.1%}' for e in errors]} (at most 10 %)")


def case_sleep5_zero():
    seconds = 5
    r = launch(["--cpu-model", "zero", "-n", "1", program("sleep5"), "--exact", str(seconds)])
    expect_status(r, 0)
    # The rank did nothing but sleep: it ends at exactly the sleep's simulated time.
    check(rank_end_times(r) == [float(seconds)], f"end times {rank_end_times(r)}, expected [{seconds}.0]")
    check(r.summary["wall_time"] < seconds / 2, f"wall time {r.summary['wall_time']} s for a simulated sleep")


def case_sleep5_measured():
    seconds = 5
    r = launch(["-n", "1", program("sleep5"), str(seconds)])
    expect_status(r, 0)
    end = rank_end_times(r)[0]
    check(seconds <= end < seconds + 1, f"end time {end}, expected {seconds} s plus the rank's CPU time")


def case_direct_syscalls_zero():
    r = launch(["--cpu-model", "zero", "-n", "1", program("direct_syscalls"), "--exact"])
    expect_status(r, 0)
    # 2 s nanosleep + 1 s absolute clock_nanosleep, nothing else takes simulated time.
    check(rank_end_times(r) == [3.0], f"end times {rank_end_times(r)}, expected [3.0]")


def case_direct_syscalls_measured():
    r = launch(["-n", "1", program("direct_syscalls")])
    expect_status(r, 0)


def case_direct_syscalls_ranks():
    # Rank R sleeps 2 + R s then 1 s: concurrent sleeps of different lengths, served by the
    # trap for several ranks at once, end at 3 + R s each.
    n = 3
    r = launch(["--cpu-model", "zero", "-n", str(n), program("direct_syscalls"), "--exact", "--per-rank"])
    expect_status(r, 0)
    expected = [3.0 + rank for rank in range(n)]
    check(rank_end_times(r) == expected, f"end times {rank_end_times(r)}, expected {expected}")


def case_child_sleep():
    r = launch(["--cpu-model", "zero", "-n", "1", program("child_sleep"), "--exact", program("time_helper")])
    expect_status(r, 0)


def case_segfault():
    r = launch(["-n", "1", program("segfault")])
    expect_status(r, 128 + signal.SIGSEGV)
    check("SIGSEGV" in r.stderr, "the diagnosis does not name SIGSEGV")
    check("s4bxi_test_segfault_here" in r.stderr, "the diagnosis has no backtrace naming the faulting function")


def case_identity():
    n = 2
    r = launch(["--cpu-model", "zero", "-n", str(n), "--ppn", "1", program("identity")])
    expect_status(r, 0)
    nodes = {x["rank"]: x["node"] for x in r.summary["ranks"]}
    seen = {}
    for line in r.stdout.splitlines():
        words = line.split()
        if len(words) == 4 and words[0] == "rank" and words[2] == "host":
            seen[int(words[1])] = words[3]
    check(seen == nodes, f"host names {seen}, expected the simulated nodes {nodes}")
    check(len(set(seen.values())) == n, "ranks on different nodes must see different names")


def case_thread_timers_zero():
    # Timers armed on the main thread and run by another thread fire after their real
    # duration; the main thread's clock still shows exactly the 5 s it slept.
    r = launch(["--cpu-model", "zero", "-n", "1", program("thread_timers"), "--exact"])
    expect_status(r, 0)
    check(rank_end_times(r) == [5.0], f"end times {rank_end_times(r)}, expected [5.0]")


def case_thread_timers_measured():
    r = launch(["-n", "1", program("thread_timers")])
    expect_status(r, 0)


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
