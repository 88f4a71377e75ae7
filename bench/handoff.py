#!/usr/bin/env python3
"""Cost of one request between a rank and the server, against what a hand-off between two
processes costs on this host (issue: cheaper hand-offs; docs/performance.md "Hand-offs").

1. bench/handoff (handoff.cpp): one server process and 1, 2 or 4 client processes hand a
   word back and forth through shared memory, waiting by spinning, by sched_yield, on a
   futex, or as s4bxi does (brief_wait.hpp: spin, yields, futex). With more processes than
   cores, spinning keeps the core from the process being waited for.
2. s4bxi: bench/null_request.c makes ROUNDS requests that the server answers at once
   (PtlGetUid), on 1, 2 and 4 ranks under --cpu-model zero; the marginal wall time per
   request is the difference of the runs of N and 2N requests divided by N per rank.

Each repetition runs every case in turn, so that the host's load falls on all alike;
printed: the median and range over repetitions, and the load average before and after.
Usage: bench/handoff.py [BUILD_DIR] [--repeat 3] [--quick]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("build", nargs="?", default="build")
parser.add_argument("--repeat", type=int, default=3)
parser.add_argument("--quick", action="store_true", help="a tenth of the rounds, once: a smoke test")
args = parser.parse_args()
build = Path(args.build)
handoff = build / "bench" / "handoff"
null_request = build / "bench" / "null_request"
launcher = build / "launcher" / "s4bxi-launch"
for path in (handoff, null_request, launcher):
    if not path.exists():
        sys.exit(f"handoff.py: {path} not found: build first (ninja -C {build})")
scale = 10 if args.quick else 1
repeat = 1 if args.quick else args.repeat

cases = []  # (label, function returning µs per request)


def micro(strategy, clients, work_ns):
    rounds = 200_000 // scale if strategy in ("spin", "brief") and clients == 1 else 40_000 // scale
    if strategy == "spin" and clients > 1:
        rounds = 2_000 // scale  # every wait may last a time slice

    def run():
        out = subprocess.run([str(handoff), strategy, str(clients), str(rounds), str(work_ns)], capture_output=True,
                             text=True, timeout=600, check=True).stdout
        return float(re.search(r": ([0-9.]+) us per request", out).group(1))
    return run


def s4bxi(ranks):
    rounds = 20_000 // scale

    def wall(n):
        done = launch(launcher, null_request, n, ranks=ranks, wall_timeout=600)
        done.check_returncode()
        return done.wall

    def run():
        return (wall(2 * rounds) - wall(rounds)) / rounds * 1e6
    return run


for clients in (1, 2, 4):
    for work_ns in (0, 3000):
        for strategy in ("spin", "yield", "futex", "brief"):
            cases.append((f"hand-off {strategy:5s} {clients} client(s), server work {work_ns} ns", micro(strategy, clients, work_ns)))
for ranks in (1, 2, 4):
    cases.append((f"s4bxi null request, {ranks} rank(s)", s4bxi(ranks)))

load_before = os.getloadavg()
results = {label: [] for label, _ in cases}
for rep in range(repeat):
    for label, run in cases:
        results[label].append(run())
        print(f"  {label}: {results[label][-1]:.2f} µs (repetition {rep + 1})", file=sys.stderr, flush=True)
load_after = os.getloadavg()

print(f"cores: {os.cpu_count()}; load average before {load_before[0]:.2f} {load_before[1]:.2f}, "
      f"after {load_after[0]:.2f} {load_after[1]:.2f}; {repeat} repetition(s)")
print(f"{'case':56s} {'µs per request':>14s} {'range':>17s}")
for label, _ in cases:
    values = results[label]
    print(f"{label:56s} {statistics.median(values):14.2f} {min(values):8.2f}-{max(values):8.2f}")
