#!/usr/bin/env python3
"""Two or more simulation servers (built from different commits) side by side, with the same
launcher and ranks: do they give the same results, and how fast is each? A change meant
to speed the server up must leave every simulated result as it was (issue #24), and this
host is shared and noisy: the runs of the servers alternate, several times.

Usage: bench/compare_servers.py [BUILD_DIR] --simkernel OLD --simkernel NEW
                                [--repeat R] [--only NAME,...] [--results-only] [--speed-only]
       bench/compare_servers.py [BUILD_DIR] --build OTHER_BUILD_DIR [...]
       bench/compare_servers.py [BUILD_DIR] --network-model detailed --network-model flow [...]

`--build DIR` puts a whole build on a side instead of a server alone: its launcher, its
interposition library (the launcher preloads its own) and its server, for a change on the
ranks' side or of the protocol between rank and server, which a server alone cannot run.
BUILD_DIR is then the first side; the programs run are BUILD_DIR's in every case.
`--network-model M` (twice or more) puts BUILD_DIR's server on every side, each under one
network model (docs/network-models.md): speed only, since the models' results differ by
design.

Results: each workload runs once per server at a small size under `--cpu-model zero`
(under the measured model simulated times follow the host's CPU time, and differ from run
to run), and the run summaries are compared whole, less what depends on the host (wall
time, pids, memory peaks): Portals ping-pongs of 8 B to 1 MiB, the 8-byte allreduce on
2, 16 and 64 ranks (bench/message_rate.c, bench/allreduce.c); when the Open MPI components
are built, stock Open MPI's 8-byte and 64 KiB ping-pongs (bench/mpi_pingpong.c) and the mpi_allreduce,
mpi_rma and mpi_coll tests on 4 ranks; when SOS is built (build/sos-prefix), ten of its
programs on 4 ranks. Exit status 1 when a summary differs.

Speed: the marginal wall time per iteration of the Portals and Open MPI ping-pongs and of
the allreduces, (wall of 2N iterations - wall of N) / N under `--cpu-model zero`, each
repetition running every server in turn (the order reversed every other repetition); a
cell is the median (min-max) of the repetitions, in µs. The load average is printed before
and after: the 64-rank runs lift it themselves.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
import mpi_compare  # noqa: E402
from testkit.launch import command, environment, run  # noqa: E402
from testkit.mpi_env import root_consent  # noqa: E402
from testkit.run_summary import host_independent  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402

SOS_PROGRAMS = ["unit/lfinc", "unit/bcast", "unit/bigput", "unit/shmem_test", "unit/atomic_inc", "unit/barrier",
                "unit/fcollect64", "unit/alltoall", "unit/get_nbi", "unit/put_nbi"]


class Workloads:
    """The command-line arguments of each workload, after s4bxi-launch's own options."""

    def __init__(self, build, work):
        bench = build / "bench"
        # name: (arguments for N iterations, N for the speed runs, N for the results check)
        self.portals = {
            "pp8": (lambda n: ["-n", "2", str(bench / "message_rate"), str(n), "8"], 10000, 500),
            "pp1k": (lambda n: ["-n", "2", str(bench / "message_rate"), str(n), "1024"], 10000, 300),
            "pp64k": (lambda n: ["-n", "2", str(bench / "message_rate"), str(n), "65536"], 2000, 100),
            "pp1m": (lambda n: ["-n", "2", str(bench / "message_rate"), str(n), "1048576"], 500, 20),
            "ar2": (lambda n: ["-n", "2", str(bench / "allreduce"), str(n)], 10000, 500),
            "ar16": (lambda n: ["--set", "platform.nodes=16", "-n", "16", str(bench / "allreduce"), str(n)], 400, 20),
            "ar64": (lambda n: ["--set", "platform.nodes=64", "-n", "64", str(bench / "allreduce"), str(n)], 40, 3),
        }
        self.checks_only = {}
        self.mpi, self.problems = {}, []
        if (build / "openmpi-portals4-components").exists():
            binaries, self.problems = mpi_compare.compile_programs(work, ("mpi_pingpong",))
            pingpong = binaries.get(("mpi", "mpi_pingpong"))
            if pingpong:
                self.mpi["mpi8"] = (lambda n: ["--", "mpirun", "-np", "2", str(pingpong), str(n), "8", "0"], 5000, 300)
                self.checks_only["mpi64k"] = ["--", "mpirun", "-np", "2", str(pingpong), "100", "65536", "0"]
            for test in ("mpi_allreduce", "mpi_rma", "mpi_coll"):
                if (build / "tests" / "mpi" / test).exists():
                    self.checks_only[test] = ["--", "mpirun", "-np", "4", str(build / "tests" / "mpi" / test)]
        else:
            self.problems.append("Open MPI components not built (tools/setup): Open MPI workloads skipped")
        try:
            sos = sos_prefix(build / "launcher" / "s4bxi-launch", None)
        except LookupError:
            sos = None
        if sos and (sos / "tests").exists():
            for program in SOS_PROGRAMS:
                if (sos / "tests" / program).exists():
                    self.checks_only[program] = ["-n", "4", str(sos / "tests" / program)]
        else:
            self.problems.append("SOS not built (tools/setup, docs/openshmem.md): SOS programs skipped")

    def timed(self):
        return {**self.portals, **self.mpi}

    def checks(self):
        """(name, arguments) of every results check."""
        return [(name, args(check)) for name, (args, _, check) in self.timed().items()] + list(self.checks_only.items())


# The launcher's environment, the same for every run: no S4BXI_* setting of the caller's, and
# mpirun's consent when run as root (it refuses root otherwise).
ENVIRONMENT = environment(root_consent())


def launch(side, args, work, summary=None):
    """`side`: (launcher, server, launcher options); `args`: the launcher's options, then the
    program and its arguments (Workloads)."""
    launcher, server, options = side
    line = command(launcher, *args, ranks=None, timeout=600, options=("--simkernel", server, *options),
                   summary=summary)
    done = run(line, wall_timeout=None, cwd=work, env=ENVIRONMENT)
    if done.returncode != 0:
        sys.exit(f"compare_servers: {' '.join(line)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.wall


def load_average():
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def shared_fields(summaries, prefix=""):
    """The summaries cut to the fields every one of them has (recursively in objects), and
    the names of those left out: a field a newer server adds is no difference of results."""
    if not all(isinstance(s, dict) for s in summaries):
        return summaries, []
    keys = set.intersection(*(set(s) for s in summaries))
    left_out = sorted(f"{prefix}{k}" for s in summaries for k in s if k not in keys)
    cut = [{} for _ in summaries]
    for k in keys:
        parts, more = shared_fields([s[k] for s in summaries], f"{prefix}{k}.")
        left_out += more
        for index, part in enumerate(parts):
            cut[index][k] = part
    return cut, sorted(set(left_out))


def compare_results(sides, workloads, only, work):
    differing = 0
    print("Results, run summaries compared less wall time, pids and memory peaks:")
    for name, args in workloads.checks():
        if only and name not in only:
            continue
        summaries = []
        for index, side in enumerate(sides):
            path = work / f"summary-{index}.json"
            path.unlink(missing_ok=True)
            launch(side, args, work, path)
            summaries.append(host_independent(path))
        summaries, left_out = shared_fields(summaries)
        if left_out:
            print(f"  {name}: not compared, written by some servers only: {', '.join(left_out)}")
        same = all(s == summaries[0] for s in summaries[1:])
        makespans = " ".join(str((s or {}).get("makespan")) for s in summaries)
        if not same:
            differing += 1
            keys = sorted({k for s in summaries for k in (s or {}) if any((t or {}).get(k) != (s or {}).get(k)
                                                                          for t in summaries)})
            print(f"  {name}: DIFFERENT ({', '.join(keys)}); makespans {makespans}", flush=True)
        else:
            print(f"  {name}: same (makespan {makespans.split()[0]} s)", flush=True)
    return differing


def compare_speed(sides, workloads, only, repeat, work):
    print(f"\nSpeed: marginal wall µs per iteration, median (min-max) of {repeat} repetitions, "
          "the sides alternating")
    print(f"load average before: {load_average()} at {time.strftime('%H:%M:%S')}")
    names = [f"server {i + 1}" for i in range(len(sides))]
    for name, (launcher, server, options) in zip(names, sides):
        print(f"{name}: {server} (launcher {launcher}{''.join(' ' + o for o in options)})")
    print("| workload | N | " + " | ".join(names) + " | " +
          " | ".join(f"{name} ÷ server 1" for name in names[1:]) + " |")
    print("|---|---|" + "---|" * (2 * len(sides) - 1))
    for name, (args, n, _) in workloads.timed().items():
        if only and name not in only:
            continue
        cells = {i: [] for i in range(len(sides))}
        for repetition in range(repeat):
            order = list(range(len(sides)))
            for i in (order if repetition % 2 == 0 else reversed(order)):
                short = launch(sides[i], args(n), work)
                long = launch(sides[i], args(2 * n), work)
                cells[i].append((long - short) / n * 1e6)
        medians = [statistics.median(cells[i]) for i in range(len(sides))]
        shown = [f"{medians[i]:.1f} ({min(cells[i]):.1f}-{max(cells[i]):.1f})" for i in range(len(sides))]
        ratios = [f"{medians[i] / medians[0]:.2f}" for i in range(1, len(sides))]
        print(f"| {name} | {n} | " + " | ".join(shown + ratios) + " |", flush=True)
    print(f"load average after: {load_average()} at {time.strftime('%H:%M:%S')}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"))
    parser.add_argument("--simkernel", action="append", default=[], help="a server binary (two or more)")
    parser.add_argument("--build", dest="builds", action="append", default=[],
                        help="another build directory, compared whole (launcher, library, server)")
    parser.add_argument("--network-model", dest="models", action="append", default=[],
                        help="a network model (two or more): BUILD_DIR's server under each, speed only")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--results-only", action="store_true")
    parser.add_argument("--speed-only", action="store_true")
    options = parser.parse_args()
    build = Path(options.build).resolve()
    launcher = build / "launcher" / "s4bxi-launch"
    if sum(bool(x) for x in (options.simkernel, options.builds, options.models)) > 1:
        sys.exit("compare_servers: give servers (--simkernel), builds (--build) or network models "
                 "(--network-model), one of them")
    if options.builds:
        builds = [build] + [Path(b).resolve() for b in options.builds]
        sides = [(b / "launcher" / "s4bxi-launch", b / "simkernel" / "s4bxi-simkernel", ()) for b in builds]
    elif options.models:
        server = build / "simkernel" / "s4bxi-simkernel"
        sides = [(launcher, server, ("--network-model", model)) for model in options.models]
        if options.results_only:
            sys.exit("compare_servers: --network-model compares speed only: the models' results differ by design")
        options.speed_only = True
    else:
        sides = [(launcher, Path(s).resolve(), ()) for s in options.simkernel]
    if len(sides) < 2:
        sys.exit("compare_servers: give two servers or more (--simkernel OLD --simkernel NEW), --build OTHER, "
                 "or two network models or more")
    for side_launcher, server, _ in sides:
        if not side_launcher.exists():
            sys.exit(f"compare_servers: {side_launcher} not found: build s4bxi first")
        if not os.access(server, os.X_OK):
            sys.exit(f"compare_servers: {server} is not an executable server")
    if options.repeat < 1:
        sys.exit("compare_servers: --repeat must be 1 or more")
    only = set(options.only.split(",")) if options.only else None
    with tempfile.TemporaryDirectory(prefix="s4bxi-compare-servers-") as tmp:
        work = Path(tmp)
        workloads = Workloads(build, work)
        for problem in workloads.problems:
            print(f"note: {problem}")
        differing = 0
        if not options.speed_only:
            differing = compare_results(sides, workloads, only, work)
        if not options.results_only:
            compare_speed(sides, workloads, only, options.repeat, work)
    if differing:
        print(f"\n{differing} workload(s) gave other results")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
