#!/usr/bin/env python3
"""s4bxi against native Open MPI and SimGrid's SMPI on the same MPI programs.

For an MPI ping-pong (bench/mpi_pingpong.c) and an MPI_Allreduce loop
(bench/mpi_allreduce.c) on each number of ranks, prints the wall time natively (Open MPI
over shared memory), the wall and simulated time under SMPI, under s4bxi (measured CPU)
and under s4bxi with --cpu-model zero, and the ratio of s4bxi's wall time to SMPI's. Then,
for a 2-rank program whose rank 1 waits in MPI_Recv while rank 0 sleeps 1 ms to 1 s
(bench/mpi_blocked_recv.c), the wall time of each run against the simulated wait.
Prints figures; asserts nothing.

Usage: bench/mpi_compare.py [BUILD_DIR] [--ranks 2,4,8,16] [--iterations 1000] [--sleeps 0.001,0.01,0.1,1]
                            [--timeout 300] [--marginal]

With --marginal, SMPI and s4bxi also run with twice the iterations, and a table gives the
wall time of each extra iteration: the cost per message, start-up left out.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

SOURCES = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.launch import LaunchTimeout, command, run as run_command  # noqa: E402
from testkit.mpi_env import root_consent  # noqa: E402

DEFAULT_PLATFORM = SOURCES.parent / "platforms" / "default.toml"


class Result:
    """One run: wall seconds, simulated seconds (None natively), the program's own loop
    time (MPI_Wtime), or the reason it has none of these."""

    def __init__(self, wall=None, simulated=None, loop=None, error=None, detail=""):
        self.wall, self.simulated, self.loop = wall, simulated, loop
        self.error, self.detail = error, detail
        self.summary = {}  # s4bxi's run summary


def run(command, timeout, env=None):
    """Runs command; returns (wall seconds, CompletedProcess) or (wall, None) on timeout."""
    start = time.monotonic()
    try:
        done = run_command(command, wall_timeout=timeout, env=env)
    except LaunchTimeout:
        return time.monotonic() - start, None
    return done.wall, done


def outcome(wall, done, simulated=None):
    """A Result from a finished command: the program's "loop X s" line, or the failure."""
    if done is None:
        return Result(error="timeout")
    if done.returncode != 0:
        return Result(wall, simulated, error=f"failed (status {done.returncode})",
                      detail=(done.stderr + done.stdout).strip()[-1500:])
    loop = re.search(r": ok: .*loop ([0-9.e+-]+) s", done.stdout)
    waited = re.search(r": ok: .*waited ([0-9.e+-]+) s", done.stdout)
    found = loop or waited
    if not found:
        return Result(wall, simulated, error="failed (no ok line)", detail=done.stdout.strip()[-1500:])
    return Result(wall, simulated, float(found.group(1)))


def compile_programs(work, names=("mpi_pingpong", "mpi_allreduce", "mpi_blocked_recv")):
    """Builds each program with mpicc and smpicc; returns {(flavour, name): path or None}."""
    binaries, problems = {}, []
    for name in names:
        for flavour, compiler in (("mpi", "mpicc"), ("smpi", "smpicc")):
            out = work / f"{name}.{flavour}"
            binaries[flavour, name] = None
            if shutil.which(compiler) is None:
                problems.append(f"{compiler} not found: {flavour} runs skipped")
                continue
            done = subprocess.run([compiler, "-O2", "-o", str(out), str(SOURCES / f"{name}.c")],
                                  capture_output=True, text=True, timeout=300)
            if done.returncode == 0:
                binaries[flavour, name] = out
            else:
                problems.append(f"{compiler} {name}.c: status {done.returncode}\n{done.stderr.strip()}")
    return binaries, sorted(set(problems))


class Runners:
    def __init__(self, build, work, timeout):
        self.launcher = build / "launcher" / "s4bxi-launch"
        self.work, self.timeout = work, timeout
        self.env = {**os.environ, **root_consent()}
        platform = tomllib.loads(DEFAULT_PLATFORM.read_text())
        self.speed = float(platform["platform"]["core_speed"])
        self.bandwidth = float(platform["bxi"]["link_bandwidth"])
        self.latency = float(platform["bxi"]["link_latency"])
        self.smpi_options = [f"--cfg=smpi/host-speed:{self.speed:g}f", "--cfg=smpi/display-timing:yes"]

    def native(self, binary, ranks, args):
        if binary is None:
            return Result(error="not built")
        wall, done = run(["mpirun", "--oversubscribe", "-np", str(ranks), str(binary), *args],
                         self.timeout, self.env)
        return outcome(wall, done)

    def smpi_files(self, ranks):
        """An N-host SimGrid cluster: each host has its own link to one switch, with the
        BXI link's bandwidth and latency, and the default platform's core speed."""
        platform, hosts = self.work / f"smpi-{ranks}.xml", self.work / f"smpi-{ranks}.hosts"
        platform.write_text(
            "<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f'  <cluster id="bxi" prefix="node" suffix="" radical="0-{ranks - 1}" speed="{self.speed:g}f"'
            f' bw="{self.bandwidth:g}Bps" lat="{self.latency * 1e9:g}ns"/>\n'
            "</platform>\n")
        hosts.write_text("".join(f"node{i}\n" for i in range(ranks)))
        return platform, hosts

    def smpi(self, binary, ranks, args):
        if binary is None:
            return Result(error="not built")
        platform, hosts = self.smpi_files(ranks)
        wall, done = run(["smpirun", "-np", str(ranks), "-platform", str(platform), "-hostfile", str(hosts),
                          *self.smpi_options, str(binary), *args], self.timeout, self.env)
        simulated = re.search(r"Simulated time: ([0-9.e+-]+) seconds", done.stderr) if done else None
        return outcome(wall, done, float(simulated.group(1)) if simulated else None)

    def s4bxi(self, binary, ranks, args, cpu_model="measured"):
        if binary is None:
            return Result(error="not built")
        summary = self.work / "summary.json"
        summary.unlink(missing_ok=True)
        wall, done = run(command(self.launcher, binary, *args, ranks=ranks, mpirun=True, cpu_model=cpu_model,
                                 timeout=self.timeout, summary=summary), self.timeout + 30, self.env)
        if done is not None and done.returncode == 124:  # the launcher's own wall-clock limit
            done = None
        result = outcome(wall, done)
        try:
            data = result.summary = json.loads(summary.read_text())
            result.wall = data.get("wall_time", result.wall)
            result.simulated = data.get("makespan")
            if data.get("status") not in (None, "ok"):
                result.detail += f"\nsummary: status {data.get('status')}: {data.get('message', '')}"
        except (OSError, ValueError):
            pass
        return result


def seconds(value, unit=1.0):
    return "-" if value is None else f"{value / unit:.3f}"


def cell(result, field, unit=1.0):
    if result.error:
        return result.error if field == "wall" else "-"
    return seconds(getattr(result, field), unit)


def ratio(result, reference):
    if result.error or reference.error or not reference.wall:
        return "-"
    return f"{result.wall / reference.wall:.1f}"


def table(title, header, rows):
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).rjust(w) for c, w in zip(row, widths)))


def marginal_row(runners, binaries, name, ranks, iterations, results, failures):
    """SMPI, s4bxi and zero again with twice the iterations: wall µs per extra iteration."""
    args = [str(2 * iterations)]
    doubled = {"SMPI": runners.smpi(binaries["smpi", name], ranks, args),
               "s4bxi": runners.s4bxi(binaries["mpi", name], ranks, args),
               "zero": runners.s4bxi(binaries["mpi", name], ranks, args, "zero")}
    per_iteration = {}
    for label, result in doubled.items():
        if result.error:
            failures.append((f"{name} {ranks} ranks, {label}, {2 * iterations} iterations", result))
        base = results[label]
        per_iteration[label] = (None if result.error or base.error else (result.wall - base.wall) / iterations * 1e6)

    def show(value):
        return "-" if value is None else f"{value:.1f}"

    def quotient(label):
        a, b = per_iteration[label], per_iteration["SMPI"]
        return "-" if a is None or not b or b <= 0 else f"{a / b:.1f}"

    return [ranks, show(per_iteration["SMPI"]), show(per_iteration["s4bxi"]), show(per_iteration["zero"]),
            quotient("s4bxi"), quotient("zero")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", default="build", help="s4bxi build directory (default: build)")
    parser.add_argument("--ranks", default="2,4,8,16", help="comma-separated rank counts (default: 2,4,8,16)")
    parser.add_argument("--iterations", type=int, default=1000,
                        help="ping-pong rounds and allreduce calls per run (default: 1000)")
    parser.add_argument("--timeout", type=float, default=300, help="wall-clock limit of each run, s (default: 300)")
    parser.add_argument("--marginal", action="store_true",
                        help="also run SMPI and s4bxi with twice the iterations and print the wall time "
                             "of each extra iteration: the cost per message without start-up")
    parser.add_argument("--sleeps", default="0.001,0.01,0.1,1",
                        help="simulated waits of the blocked MPI_Recv runs, s (default: 0.001,0.01,0.1,1; "
                             "empty: skip them)")
    options = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    ranks = [int(n) for n in options.ranks.split(",") if n.strip()]
    build = Path(options.build)
    if not (build / "launcher" / "s4bxi-launch").exists():
        sys.exit(f"{build}/launcher/s4bxi-launch not found: build s4bxi first (ninja -C {build})")

    with tempfile.TemporaryDirectory(prefix="s4bxi-mpi-compare-") as scratch:
        work = Path(scratch)
        binaries, problems = compile_programs(work)
        runners = Runners(build, work, options.timeout)
        failures = []
        print(f"host: {os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.2f}")
        print(f"native: mpirun --oversubscribe -np N (Open MPI's default transports: shared memory)")
        print(f"SMPI: smpirun -np N -platform <N hosts, each with its own link to one switch: "
              f"{runners.bandwidth:g} B/s, {runners.latency * 1e9:g} ns (bxi.link_bandwidth/latency of "
              f"platforms/default.toml), host speed {runners.speed:g} flop/s> {' '.join(runners.smpi_options)}")
        print("      (SMPI's default network model 'SMPI' with its latency and bandwidth factors; no PCIe; "
              "measured computation counted at host-speed = platform speed, i.e. 1:1 like s4bxi)")
        print("s4bxi: s4bxi-launch -q --summary FILE [--cpu-model zero] -- mpirun -np N (built-in default "
              "platform; wall time and makespan from the summary)")
        print("wall times in s include start-up (mpirun, MPI_Init); 'sim' is the simulated makespan in ms; "
              "'us/it' is the program's own MPI_Wtime loop time per iteration")
        for problem in problems:
            print(f"warning: {problem}")

        programs = (("mpi_pingpong", f"ping-pong between ranks 2k and 2k+1, {options.iterations} round trips of 8 B"),
                    ("mpi_allreduce", f"MPI_Allreduce of 16 ints, {options.iterations} calls"))
        header = ["ranks", "native wall", "native us/it", "SMPI wall", "SMPI sim", "SMPI us/it",
                  "s4bxi wall", "s4bxi sim", "s4bxi us/it", "zero wall", "zero sim", "zero us/it",
                  "s4bxi/SMPI", "zero/SMPI"]
        per_it = 1e-6 * options.iterations
        marginal_rows = []
        for name, title in programs:
            rows = []
            for n in ranks:
                if name == "mpi_pingpong" and n % 2:
                    rows.append([n] + ["odd: skipped"] + ["-"] * (len(header) - 2))
                    continue
                args = [str(options.iterations)]
                results = {"native": runners.native(binaries["mpi", name], n, args),
                           "SMPI": runners.smpi(binaries["smpi", name], n, args),
                           "s4bxi": runners.s4bxi(binaries["mpi", name], n, args),
                           "zero": runners.s4bxi(binaries["mpi", name], n, args, "zero")}
                for label, result in results.items():
                    if result.error:
                        failures.append((f"{name} {n} ranks, {label}", result))
                row = [n, cell(results["native"], "wall"), cell(results["native"], "loop", per_it)]
                for label in ("SMPI", "s4bxi", "zero"):
                    r = results[label]
                    row += [cell(r, "wall"), seconds(r.simulated, 1e-3), cell(r, "loop", per_it)]
                row += [ratio(results["s4bxi"], results["SMPI"]), ratio(results["zero"], results["SMPI"])]
                rows.append(row)
                if options.marginal:
                    marginal_rows.append(marginal_row(runners, binaries, name, n, options.iterations, results,
                                                      failures))
                print(f"  {name} {n} ranks done", file=sys.stderr)
            table(f"{name}: {title}", header, rows)
            if options.marginal:
                table(f"{name}: wall time per extra iteration, us ((wall at {2 * options.iterations} iterations "
                      f"- wall at {options.iterations}) / {options.iterations}; start-up left out)",
                      ["ranks", "SMPI", "s4bxi", "zero", "s4bxi/SMPI", "zero/SMPI"], marginal_rows)
                marginal_rows = []

        sleeps = [float(s) for s in options.sleeps.split(",") if s.strip()]
        if sleeps:
            rows = []
            for pause in sleeps:
                args = [f"{pause:g}"]
                results = {"native": runners.native(binaries["mpi", "mpi_blocked_recv"], 2, args),
                           "SMPI": runners.smpi(binaries["smpi", "mpi_blocked_recv"], 2, args),
                           "s4bxi": runners.s4bxi(binaries["mpi", "mpi_blocked_recv"], 2, args)}
                for label, result in results.items():
                    if result.error:
                        failures.append((f"mpi_blocked_recv {pause:g} s, {label}", result))
                rows.append([f"{pause * 1e3:g} ms", cell(results["native"], "wall"),
                             cell(results["SMPI"], "wall"), cell(results["SMPI"], "loop", 1e-3),
                             cell(results["s4bxi"], "wall"), cell(results["s4bxi"], "loop", 1e-3),
                             seconds(results["s4bxi"].simulated, 1e-3),
                             next((r["portals_ops"] for r in results["s4bxi"].summary.get("ranks", [])
                                   if r.get("rank") == 1), "-")])
            table("mpi_blocked_recv: 2 ranks, rank 0 sleeps (nanosleep) then sends, rank 1 waits in MPI_Recv "
                  "(target: s4bxi wall time flat while the simulated wait grows)",
                  ["sleep", "native wall", "SMPI wall", "SMPI wait ms", "s4bxi wall", "s4bxi wait ms",
                   "s4bxi sim", "rank 1 Portals ops"], rows)

        for label, result in failures:
            print(f"\n{label}: {result.error}")
            if result.detail:
                print("  " + result.detail.replace("\n", "\n  "))


if __name__ == "__main__":
    main()
