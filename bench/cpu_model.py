#!/usr/bin/env python3
"""What the CPU model does to MPI figures: the same programs under --cpu-model zero and
under the measured model (the default), quiet and beside a CPU hog, and natively.

- OSU's osu_latency (2 ranks): one-way µs per size, RUNS runs per model (min..max and
  median of each size), and one more run of each beside a CPU hog (a busy-loop process
  this script starts and kills); natively (Open MPI over shared memory, no s4bxi) too;
- OSU's osu_latency_mt (2 ranks, MPI_THREAD_MULTIPLE, two receiving threads): one-way µs
  per size, once per model, with its wall time (flagged past a minute);
- the simulated cost of one MPI_Test with nothing to complete (bench/mpi_test_cost.c),
  per model and natively;
- weak scaling of a rank's own work (bench/weak_scaling.c: a fixed flop loop, sweeps over
  32 MiB, an MPI_Allreduce) on 2 and 16 ranks: the per-rank means of the compute's and
  of the sweep's MPI_Wtime time and their ratio 16/2, quiet and beside a CPU hog.

The load average is printed at the start and at the end. Prints figures; asserts nothing
but that every run succeeds.

Usage: bench/cpu_model.py [BUILD_DIR] [--osu DIR] [--runs R] [--quick] [--timeout S]

OSU comes from tools/build-osu (tools/setup records its directory in BUILD_DIR/osu-prefix);
--osu names another. Exit status 77 when OSU, Open MPI's Portals 4 components or the two
programs (mpicc) are not built, 1 when a run fails. --quick: one run per model, few iterations, 2 and 4 ranks for
the weak scaling and a smaller buffer: a smoke test that says nothing of the figures.
"""
import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
import mpi_compare  # noqa: E402
from compare_servers import load_average  # noqa: E402
from testkit.launch import command  # noqa: E402
from testkit.osu import figures as osu_figures, osu_directory  # noqa: E402

SKIP = 77
MODELS = ("zero", "measured")
MINUTE = 60.0
TEST_COST = re.compile(r"mpi_test_cost: ok: .* ([0-9.]+) ns per call")
WEAK = re.compile(r"weak_scaling: rank (\d+) of \d+: compute ([0-9.e+-]+) s, sweep ([0-9.e+-]+) s")


@contextlib.contextmanager
def cpu_hog(wanted=True):
    """A process that spins on a core for as long as the block runs."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if wanted else None
    try:
        yield
    finally:
        if hog:
            hog.kill()
            hog.wait()


class Bench:
    def __init__(self, options, work):
        self.options, self.work = options, work
        self.runners = mpi_compare.Runners(Path(options.build), work, options.timeout)
        self.failures = []

    def s4bxi(self, model, ranks, program, *args):
        """Runs `mpirun -np RANKS PROGRAM ARGS` under s4bxi-launch; (wall s, stdout) or None."""
        summary = self.work / "summary.json"
        line = command(self.runners.launcher, program, *args, ranks=ranks, mpirun=True, cpu_model=model,
                       timeout=self.options.timeout, summary=summary)
        return self.finish(line, f"{Path(program).name} {' '.join(map(str, args))} on {ranks} ranks, {model}")

    def native(self, ranks, program, *args):
        line = ["mpirun", "--oversubscribe", "--mca", "btl", "self,vader", "-np", str(ranks), str(program),
                *map(str, args)]
        return self.finish(line, f"{Path(program).name} on {ranks} ranks, native")

    def finish(self, line, what):
        wall, done = mpi_compare.run(line, self.options.timeout + 30, self.runners.env)
        if done is None or done.returncode != 0:
            status = "timeout" if done is None else f"status {done.returncode}"
            detail = "" if done is None else (done.stderr + done.stdout).strip()[-1500:]
            self.failures.append(f"{what}: {status}\n{detail}")
            return None
        return wall, done.stdout


def spread(values, digits=2):
    """min..max (median) of a list of figures."""
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{min(values):.{digits}f}..{max(values):.{digits}f} ({statistics.median(values):.{digits}f})"


def osu_latency(bench, osu, iterations):
    program = osu / "mpi" / "pt2pt" / "osu_latency"
    args = ["-i", iterations, "-x", max(1, iterations // 10)]
    runs = {model: [] for model in MODELS}
    hogged = {}
    for _ in range(bench.options.runs):
        for model in MODELS:
            result = bench.s4bxi(model, 2, program, *args)
            if result:
                runs[model].append(osu_figures(result[1]))
    for model in MODELS:
        with cpu_hog():
            result = bench.s4bxi(model, 2, program, *args)
        hogged[model] = osu_figures(result[1]) if result else {}
    result = bench.native(2, program, *args)
    native = osu_figures(result[1]) if result else {}

    sizes = sorted({size for figures in runs["zero"] + runs["measured"] for size in figures})
    rows = []
    for size in sizes:
        row = [size]
        for model in MODELS:
            row.append(spread([figures[size] for figures in runs[model] if size in figures]))
            row.append(f"{hogged[model][size]:.2f}" if size in hogged[model] else "-")
        row.append(f"{native[size]:.2f}" if size in native else "-")
        rows.append(row)
    mpi_compare.table(f"osu_latency, 2 ranks, -i {args[1]} -x {args[3]}: one-way µs per size, min..max (median) of "
                      f"{bench.options.runs} runs per model, and one run beside a CPU hog",
                      ["size B", "zero", "zero, hog", "measured", "measured, hog", "native"], rows)
    for model in MODELS:
        eight = [figures[8] for figures in runs[model] if 8 in figures]
        if eight:
            print(f"  8 B under {model}: min {min(eight):.2f}, max {max(eight):.2f}, median "
                  f"{statistics.median(eight):.2f} µs; beside a hog {hogged[model].get(8, float('nan')):.2f} µs")
    print(f"  native (mpirun --mca btl self,vader, no s4bxi), 0 to 8 B: "
          + ", ".join(f"{size} B {native[size]:.2f} µs" for size in (0, 1, 2, 4, 8) if size in native))
    # The median per size and model: what osu_latency_mt is held to (at most twice).
    return {model: {size: statistics.median([f[size] for f in runs[model] if size in f])
                     for size in sizes if any(size in f for f in runs[model])} for model in MODELS}


def osu_latency_mt(bench, osu, iterations, single):
    program = osu / "mpi" / "pt2pt" / "osu_latency_mt"
    args = ["-i", iterations, "-x", max(1, iterations // 10)]
    figures, walls = {}, {}
    for model in MODELS:
        result = bench.s4bxi(model, 2, program, *args)
        walls[model] = result[0] if result else None
        figures[model] = osu_figures(result[1]) if result else {}
    sizes = sorted(set(figures["zero"]) | set(figures["measured"]))
    def ratio(model, size):
        if size not in figures[model] or not single[model].get(size):
            return "-"
        return f"{figures[model][size] / single[model][size]:.2f}"

    rows = [[size] + [f"{figures[model][size]:.2f}" if size in figures[model] else "-" for model in MODELS]
            + [ratio(model, size) for model in MODELS] for size in sizes]
    mpi_compare.table(f"osu_latency_mt, 2 ranks (two receiving threads), -i {args[1]} -x {args[3]}: one-way µs "
                      f"per size, and its ratio to osu_latency's median (at most 2 is the target)",
                      ["size B", *MODELS, *(f"/ osu_latency, {model}" for model in MODELS)], rows)
    for model in MODELS:
        wall = walls[model]
        note = "failed" if wall is None else f"{wall:.1f} s" + (" (more than a minute)" if wall > MINUTE else "")
        print(f"  wall time under {model}: {note}")


def test_cost(bench, calls):
    program = Path(bench.options.build) / "bench" / "mpi_test_cost"
    cells = []
    for label, result in [(model, bench.s4bxi(model, 2, program, calls)) for model in MODELS] + \
                         [("native", bench.native(2, program, calls))]:
        found = TEST_COST.search(result[1]) if result else None
        cells.append([label, found.group(1) if found else "failed"])
    mpi_compare.table(f"MPI_Test with nothing to complete (bench/mpi_test_cost, 2 ranks, {calls} calls): ns per "
                      f"call, simulated under s4bxi, real natively", ["run", "ns per MPI_Test"], cells)


def weak_scaling(bench, ranks, args):
    program = Path(bench.options.build) / "bench" / "weak_scaling"
    rows = []
    for model in MODELS:
        for hogged in (False, True):
            if model == "zero" and hogged:
                continue  # nothing is charged under zero: the hog cannot move it
            means = {}
            for n in ranks:
                with cpu_hog(hogged):
                    result = bench.s4bxi(model, n, program, *args)
                found = WEAK.findall(result[1]) if result else []
                if len(found) == n:
                    means[n] = (statistics.mean(float(c) for _, c, _ in found),
                                statistics.mean(float(s) for _, _, s in found))
            row = [f"{model}{', hog' if hogged else ''}"]
            for index in (0, 1):
                row += [f"{means[n][index] * 1e3:.2f}" if n in means else "-" for n in ranks]
                low, high = (means.get(n) for n in ranks)
                row.append(f"{high[index] / low[index]:.2f}" if low and high and low[index] > 0 else "-")
            rows.append(row)
    a, b = ranks
    mpi_compare.table(f"weak scaling (bench/weak_scaling {' '.join(map(str, args))}: M flops, sweeps, MiB): per-rank "
                      f"mean of MPI_Wtime's ms", ["run", f"compute {a}", f"compute {b}", f"{b}/{a}",
                                                  f"sweep {a}", f"sweep {b}", f"{b}/{a}"], rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(HERE.parent / "build"),
                        help="s4bxi build directory (default: build)")
    parser.add_argument("--osu", help="OSU micro-benchmarks directory (default: BUILD_DIR/osu-prefix's)")
    parser.add_argument("--runs", type=int, default=5, help="osu_latency runs per model (default: 5)")
    parser.add_argument("--timeout", type=float, default=300, help="wall-clock limit of each run, s (default: 300)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small counts, once")
    options = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    build = Path(options.build).resolve()
    options.build = str(build)
    if not (build / "launcher" / "s4bxi-launch").exists():
        sys.exit(f"{build}/launcher/s4bxi-launch not found: build s4bxi first (ninja -C {build})")
    if not (build / "openmpi-portals4-components").exists():
        print("Open MPI's Portals 4 components are not built (tools/setup): skipped")
        return SKIP
    try:
        osu = Path(options.osu) if options.osu else osu_directory(build)
    except LookupError:
        osu = None
    if osu is None or not (osu / "mpi" / "pt2pt" / "osu_latency").exists():
        print(f"the OSU micro-benchmarks are not built (tools/build-osu, or --osu DIR): skipped")
        return SKIP
    for program in ("mpi_test_cost", "weak_scaling"):
        if not (build / "bench" / program).exists():
            print(f"{build}/bench/{program} not found (mpicc was missing when {build} was configured): skipped")
            return SKIP
    if options.quick:
        options.runs = 1
        iterations, mt_iterations, calls, ranks, weak_args = 20, 10, 200, (2, 4), (5, 1, 4)
    else:
        iterations, mt_iterations, calls, ranks, weak_args = 1000, 1000, 10000, (2, 16), (200, 4, 32)

    print(f"host: {os.cpu_count()} CPUs, load average at start {load_average()}")
    print(f"OSU: {osu}")
    with tempfile.TemporaryDirectory(prefix="s4bxi-cpu-model-") as scratch:
        bench = Bench(options, Path(scratch))
        single = osu_latency(bench, osu, iterations)
        osu_latency_mt(bench, osu, mt_iterations, single)
        test_cost(bench, calls)
        weak_scaling(bench, ranks, weak_args)
    print(f"\nload average at end {load_average()}")
    for failure in bench.failures:
        print(f"\nfailed: {failure}")
    return 1 if bench.failures else 0


if __name__ == "__main__":
    sys.exit(main())
