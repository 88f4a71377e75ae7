#!/usr/bin/env python3
"""OSU micro-benchmarks 5.3, unmodified (tools/build-osu), under s4bxi-launch -- mpirun.

usage: run_osu.py LAUNCHER BUILD_DIR GROUP CPU_MODEL [RANKS RANKS_PER_NODE]

GROUP is pt2pt, one-sided, startup (2 ranks on 2 nodes), collective or nonblocking (RANKS
ranks, RANKS_PER_NODE per node). Every program of the group must exit 0 and print a figure
for every size it runs. Iterations and sizes are cut down so that the group stays short (3
iterations; blocking collectives up to 16 KiB, non-blocking ones once, up to 4 B; OSU's
one-sided programs have no size option, and the accumulates run on a platform that orders
1024 B: testkit/osu.py, ONE_SIDED_ORDERING); with S4BXI_CHECK_FULL=1 (tools/check --full), every size
runs, 100 times (collectives 10, non-blocking ones 3), on the default platform.
The non-blocking collectives run at each check on 4 nodes of 4 under the measured CPU
model only, the other cases under --full.
Exits 77 (skipped) when OSU or Open MPI's Portals components were not built, saying how to
provide them."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402
from testkit.mpi_env import launch_environment, osu_for_mpi  # noqa: E402
from testkit.osu import MPI_PROGRAMS as PROGRAMS, every_size, figures, mpi_arguments, mpi_platform_options, report  # noqa: E402

SKIP = 77
# What the start-up programs print instead of figures per size.
# (osu_hello prints nothing: MPI_Init, MPI_Finalize, exit 0.)
STARTUP_LINES = {"osu_init": re.compile(r"nprocs: \d+, min: [\d.]+, max: [\d.]+, avg: [\d.]+")}


def figures_expected(group, program):
    return group != "startup" and program not in ("osu_barrier", "osu_ibarrier")


def run(launcher, program, ranks, ppn, cpu_model, args, platform_options=(), limit=600):
    argv = command(launcher, program, *args, ranks=ranks, mpirun=True, cpu_model=cpu_model, timeout=limit,
                   options=("--ppn", ppn, *platform_options))
    print("$", " ".join(argv), flush=True)
    result = run_command(argv, wall_timeout=limit + 100, env=launch_environment())
    return result, result.wall


def main(argv):
    if len(argv) not in (5, 7):
        print(__doc__, file=sys.stderr)
        return 2
    launcher, build, group, cpu_model = argv[1], Path(argv[2]), argv[3], argv[4]
    ranks, ppn = (int(argv[5]), int(argv[6])) if len(argv) == 7 else (2, 1)
    if group not in PROGRAMS:
        print(f"unknown group {group!r}: one of {', '.join(PROGRAMS)}", file=sys.stderr)
        return 2
    try:
        osu = osu_for_mpi(build, launcher)
    except LookupError as why:
        print(f"skipped: {why}")
        return SKIP
    folder = osu / "mpi" / ("collective" if group in ("collective", "nonblocking") else group)
    full = every_size()
    if group == "nonblocking" and (ppn == 1 or cpu_model == "zero") and not full:
        print("skipped: the non-blocking collectives on 16 nodes of one rank, and under the zero CPU model, run "
              "under tools/check --full (S4BXI_CHECK_FULL=1): OSU 5.3's osu_i*v programs run 200 iterations "
              "whatever -i says and each iteration costs about 0.1 s of wall time on 16 ranks (docs/openmpi.md); "
              "4 nodes of 4 under the measured model run at every check")
        return SKIP
    failures = []
    for name in PROGRAMS[group]:
        program = folder / name
        if not program.exists():
            failures.append(f"{name}: not built ({program} is missing)")
            continue
        # Every size of an osu_i*v program: 200 iterations each below 8 KiB, whatever -i says.
        limit = 1800 if group == "nonblocking" and full else 600
        result, wall = run(launcher, program, ranks, ppn, cpu_model, mpi_arguments(group, full),
                           mpi_platform_options(name, full), limit)
        sizes = figures(result.stdout)
        print(f"{name}: exit {result.returncode}, {len(sizes)} sizes, {wall:.1f} s of wall time", flush=True)
        if result.returncode != 0:
            failures.append(f"{name}: exit status {result.returncode}\n{result.stdout[-2000:]}{result.stderr[-3000:]}")
        elif figures_expected(group, name) and not sizes:
            failures.append(f"{name}: no figure printed\n{result.stdout[-2000:]}")
        elif name in STARTUP_LINES and not STARTUP_LINES[name].search(result.stdout):
            failures.append(f"{name}: not the line it prints\n{result.stdout[-2000:]}")
    return report(failures, {}, f"{len(PROGRAMS[group])} programs of OSU's {group} group, "
                                                    f"{ranks} ranks, {ppn} per node, --cpu-model {cpu_model}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
