#!/usr/bin/env python3
"""Endurance of the simulator: does a long run cost, per message, what a short one does,
and does its memory stay flat? For 8-byte and 1 MiB Portals ping-pongs at several run
lengths and a recursive-doubling allreduce at 16, 64 and 256 ranks (all under
--cpu-model zero), prints the wall time, the marginal wall time per iteration (the
difference of the runs of N and 2N iterations, divided by N), the server's peak resident
set and the largest rank's. Asserts nothing.

Usage: bench/endurance.py [BUILD_DIR ...] [--repeat R] [--quick]

With several build directories (e.g. two checkouts of different commits), each
measurement runs once per build in turn, R times: the host's load shifts between them
alike. Figures are given as ranges over the repetitions."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.launch import command  # noqa: E402

PINGPONG_8B = [20000, 40000, 80000, 160000]
PINGPONG_1MIB = [200, 400, 1000, 2000]
ALLREDUCE = [(16, 1000), (64, 200), (256, 20)]  # ranks, iterations of the shorter run
QUICK = dict(p8=[20000, 40000], p1m=[200, 400], ar=[(16, 200), (64, 40)])


def run(build, ranks, program, arguments, nodes=None):
    launcher = Path(build) / "launcher" / "s4bxi-launch"
    with tempfile.NamedTemporaryFile(suffix=".json") as summary:
        line = command(launcher, Path(build) / "bench" / program, *arguments, ranks=ranks,
                       settings=[f"platform.nodes={nodes}"] if nodes else [], summary=summary.name)
        start = time.monotonic()
        # Its own wait, not testkit.launch.run: the kernel's accounting of this one child (wait4)
        # gives its memory peak, and a long run's output is not kept.
        with tempfile.TemporaryFile() as errors:
            child = subprocess.Popen(line, stdout=subprocess.DEVNULL, stderr=errors)
            _, raw_status, usage = os.wait4(child.pid, 0)
            status = os.waitstatus_to_exitcode(raw_status)
            wall = time.monotonic() - start
            if status != 0:
                errors.seek(0)
                sys.exit(f"{' '.join(line)}: status {status}\n{errors.read().decode()}")
        data = json.load(open(summary.name))
    # Builds from before the summary reported memory: the largest process of the run (the
    # server, in practice), from the kernel's accounting.
    server = data.get("server_peak_rss", usage.ru_maxrss * 1024)
    return wall, server / 2**20, data.get("largest_rank_peak_rss", 0) / 2**20


def span(values, digits=2):
    low, high = min(values), max(values)
    text = f"{low:.{digits}f}"
    return text if f"{high:.{digits}f}" == text else f"{text}-{high:.{digits}f}"


def measure(builds, repeat, label, ranks, program, lengths, argument, nodes=None):
    """Runs every length of one workload; prints one line per length and build."""
    results = {(b, n): [] for b in builds for n in lengths}
    for _ in range(repeat):
        for n in lengths:
            for b in builds:
                results[(b, n)].append(run(b, ranks, program, argument(n), nodes))
    for b in builds:
        for n in lengths:
            walls = [r[0] for r in results[(b, n)]]
            marginal = "-"
            if 2 * n in lengths:
                longer = [r[0] for r in results[(b, 2 * n)]]
                marginal = span([(l - s) / n * 1e6 for s, l in zip(walls, longer)], 1)
            print(f"{label:28s} {n:>8d} {b[-24:]:>24s} {span(walls):>12s} {marginal:>14s} "
                  f"{span([r[1] for r in results[(b, n)]], 1):>12s} {span([r[2] for r in results[(b, n)]], 1):>10s}",
                  flush=True)


def memcpy_us(size, times=2000):
    source, target = bytearray(os.urandom(size)), bytearray(size)
    target[:] = source  # fault the pages in first
    start = time.perf_counter()
    for _ in range(times):
        target[:] = source
    return (time.perf_counter() - start) / times * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("builds", nargs="*", default=["build"])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="shorter runs, 16 and 64 ranks only")
    args = parser.parse_args()
    p8 = QUICK["p8"] if args.quick else PINGPONG_8B
    p1m = QUICK["p1m"] if args.quick else PINGPONG_1MIB
    ar = QUICK["ar"] if args.quick else ALLREDUCE
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} cores")
    print(f"{'workload':28s} {'iter.':>8s} {'build':>24s} {'wall s':>12s} {'µs/iter marg.':>14s} "
          f"{'server MiB':>12s} {'rank MiB':>10s}")
    measure(args.builds, args.repeat, "ping-pong 8 B", 2, "message_rate", p8, lambda n: [n, 8])
    measure(args.builds, args.repeat, "ping-pong 1 MiB", 2, "message_rate", p1m, lambda n: [n, 1 << 20])
    print(f"for scale: one memcpy of 1 MiB on this host takes {memcpy_us(1 << 20):.1f} µs "
          "(a round trip moves its payload twice, each time read from one rank and written to the other)")
    for ranks, iterations in ar:
        measure(args.builds, args.repeat, f"allreduce 8 B, {ranks} ranks", ranks, "allreduce",
                [iterations, 2 * iterations], lambda n: [n], nodes=max(ranks, 16))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
