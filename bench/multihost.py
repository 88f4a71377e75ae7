#!/usr/bin/env python3
"""What spreading the ranks over machines costs (docs/multi-host.md): the same stock Open
MPI programs with every rank on the server's machine, and spread over namespace machines
(tests/testkit/machines.py; root only), under --cpu-model zero, the runs alternating.

- the 8 B MPI ping-pong (bench/mpi_pingpong.c) with its two ranks on one machine, then on
  two: the marginal wall time per round trip, and from it the wall time one request of
  the remote rank costs over TCP beyond the shared-memory slot (the round trip's extra
  time over the remote rank's requests per round trip, from the run summary);
- the 8 B allreduce on RANKS ranks (bench/mpi_allreduce.c, 64 by default) on one machine,
  then over 4: the marginal wall time per allreduce.

Each cell is the median (min-max) of --repeat repetitions of (wall of 2N - wall of N) / N.
The simulated results of the two placements are the same (tests/multihost checks it).

usage: bench/multihost.py [BUILD_DIR] [--repeat R] [--ranks 64] [--quick]"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))
import mpi_compare  # noqa: E402
from testkit.machines import Machines, skip_reason  # noqa: E402


def load_average():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


class Placements:
    def __init__(self, build, machines, work):
        self.launcher = build / "launcher" / "s4bxi-launch"
        self.machines = machines
        self.work = work
        self.env = {**os.environ, "OMPI_MCA_plm_rsh_agent": str(machines.rsh_agent)}

    def run(self, program, args, ranks, spread, summary=None):
        """Wall seconds of one run from machine m0; `spread`: over that many machines."""
        m0 = self.machines[0]
        line = [str(self.launcher), "-q", "--cpu-model", "zero", "--timeout", "900"]
        if summary:
            line += ["--summary", str(summary)]
        if spread > 1:
            hosts = self.work / f"hosts-{spread}"
            per_machine = (ranks + spread - 1) // spread
            hosts.write_text("".join(f"m{i} slots={per_machine}\n" for i in range(spread)))
            line += ["--listen", m0.address, "--", "mpirun", "--hostfile", str(hosts), "-np", str(ranks),
                     "--map-by", "node"]
        else:
            line += ["--", "mpirun", "-np", str(ranks)]
        started = time.monotonic()
        done = m0.run(line + [str(program), *map(str, args)], capture_output=True, text=True, timeout=1200,
                      env=self.env)
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"multihost: {' '.join(line)} {program} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        return wall


def marginal(placements, program, args_of, n, ranks, spread, repeat):
    cells = []
    for _ in range(repeat):
        short = placements.run(program, args_of(n), ranks, spread)
        long = placements.run(program, args_of(2 * n), ranks, spread)
        cells.append((long - short) / n)
    return cells


def shown(cells):
    return f"{statistics.median(cells) * 1e6:.0f} ({min(cells) * 1e6:.0f}-{max(cells) * 1e6:.0f})"


def requests_of(summary_path, rank):
    """The Portals operations of `rank` in a run summary that crossed its channel: less
    those it answered from its mirror, and posted ones ride with the next request."""
    summary = json.loads(Path(summary_path).read_text())
    for entry in summary.get("ranks", []):
        if entry.get("rank") == rank:
            return entry.get("portals_ops", 0) - entry.get("portals_local_ops", 0) - entry.get("portals_posted", 0)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="few iterations, 8 ranks, once: a smoke test")
    a = parser.parse_args()
    if why := skip_reason():
        print(f"multihost: skipped: {why}")
        return 0
    build = Path(a.build).resolve()
    ping_n, reduce_n, ranks, repeat = (2000, 40, a.ranks, a.repeat) if not a.quick else (200, 5, 8, 1)
    with tempfile.TemporaryDirectory(prefix="s4bxi-multihost-", dir="/var/tmp") as tmp, Machines(4, visible=(ROOT, build)) as machines:
        work = Path(tmp)
        binaries, problems = mpi_compare.compile_programs(work, ("mpi_pingpong", "mpi_allreduce"))
        pingpong, allreduce = binaries.get(("mpi", "mpi_pingpong")), binaries.get(("mpi", "mpi_allreduce"))
        if not pingpong or not allreduce:
            print("multihost: skipped: " + "; ".join(problems))
            return 0
        # The machines see the caller's file system but /tmp, /dev/shm and /run.
        placements = Placements(build, machines, work)
        print(f"load average before: {load_average()} at {time.strftime('%H:%M:%S')}")
        ping = {spread: [] for spread in (1, 2)}
        for _ in range(repeat):  # alternating placements
            for spread in (1, 2):
                ping[spread] += marginal(placements, pingpong, lambda n: [n, 8, 0], ping_n, 2, spread, 1)
        summary = work / "pingpong.json"
        placements.run(pingpong, [ping_n, 8, 0], 2, 2, summary)
        per_round_trip = requests_of(summary, 1) / ping_n
        extra = statistics.median(ping[2]) - statistics.median(ping[1])
        print(f"| 8 B MPI ping-pong, µs per round trip | one machine {shown(ping[1])} | two machines {shown(ping[2])} |")
        if per_round_trip > 0:
            print(f"  the remote rank makes {per_round_trip:.1f} requests per round trip: "
                  f"{extra / per_round_trip * 1e6:.0f} µs each over TCP beyond the shared-memory slot")
        reduce = {spread: [] for spread in (1, 4)}
        for _ in range(repeat):
            for spread in (1, 4):
                reduce[spread] += marginal(placements, allreduce, lambda n: [n, 2], reduce_n, ranks, spread, 1)
        print(f"| 8 B allreduce on {ranks} ranks, µs per allreduce | one machine {shown(reduce[1])} | "
              f"four machines {shown(reduce[4])} |")
        print(f"load average after: {load_average()} at {time.strftime('%H:%M:%S')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
