#!/usr/bin/env python3
"""OSU micro-benchmarks 5.3, unmodified (tools/build-osu), under s4bxi-launch -- mpirun.

usage: run_osu.py LAUNCHER BUILD_DIR GROUP CPU_MODEL [RANKS RANKS_PER_NODE]

GROUP is pt2pt, one-sided, startup (2 ranks on 2 nodes), collective or nonblocking (RANKS
ranks, RANKS_PER_NODE per node). Every program of the group must exit 0 and print a figure
for every size it runs. Iterations and sizes are cut down so that the group stays short (3
iterations; blocking collectives up to 16 KiB, non-blocking ones up to 16 B; OSU's
one-sided programs have no size option, and the accumulates run on a platform that orders
1024 B, see ONE_SIDED_ORDERING); with S4BXI_CHECK_FULL=1 (tools/check --full), every size
runs, 100 times (collectives 10), on the default platform. The non-blocking collectives
on 16 nodes of one rank run only under --full.
Exits 77 (skipped) when OSU or Open MPI's Portals components were not built, saying how to
provide them."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402
from testkit.mpi_env import launch_environment, osu_for_mpi  # noqa: E402
from testkit.osu import every_size, figures, report  # noqa: E402

SKIP = 77
PROGRAMS = {
    "pt2pt": ["osu_latency", "osu_bw", "osu_bibw", "osu_latency_mt", "osu_multi_lat", "osu_mbw_mr"],
    "one-sided": ["osu_put_latency", "osu_get_latency", "osu_put_bw", "osu_get_bw", "osu_put_bibw",
                  "osu_cas_latency", "osu_fop_latency", "osu_acc_latency", "osu_get_acc_latency"],
    "startup": ["osu_init", "osu_hello"],
    "collective": ["osu_allgather", "osu_allgatherv", "osu_allreduce", "osu_alltoall", "osu_alltoallv",
                   "osu_barrier", "osu_bcast", "osu_gather", "osu_gatherv", "osu_reduce", "osu_reduce_scatter",
                   "osu_scatter", "osu_scatterv"],
    # They time the collective's overlap with a computation (a loop on MPI_Wtime). OSU
    # 5.3's osu_ibarrier runs 100 iterations (and 10 of warm-up) whatever -i says.
    "nonblocking": ["osu_iallgather", "osu_iallgatherv", "osu_ialltoall", "osu_ialltoallv", "osu_ialltoallw",
                    "osu_ibarrier", "osu_ibcast", "osu_igather", "osu_igatherv", "osu_iscatter", "osu_iscatterv"],
}
# OSU 5.3's one-sided programs run every size, those above 8 KiB 110 times whatever -i
# says, and Open MPI's osc/portals4 splits an accumulate into Portals atomics of
# MIN(max_atomic_size, ordered size) bytes (fetching ones: max_fetch_atomic_size): 64 B on
# the default platform, 65536 atomics per 4 MiB, about 6 minutes of wall time for
# osu_acc_latency. Outside --full they run on a platform that orders 1024 B (and fetches
# 1024 B atomically): 16 times fewer atomics, 40 to 80 s each.
ONE_SIDED_ORDERING = tuple(word for limit in ("max_waw_ordered_size", "max_war_ordered_size", "max_fetch_atomic_size")
                           for table in ("limit_caps", "limits") for word in ("--set", f"nic.{table}.{limit}=1024"))
PLATFORM_OPTIONS = {"osu_acc_latency": ONE_SIDED_ORDERING, "osu_get_acc_latency": ONE_SIDED_ORDERING}
# What the start-up programs print instead of figures per size.
# (osu_hello prints nothing: MPI_Init, MPI_Finalize, exit 0.)
STARTUP_LINES = {"osu_init": re.compile(r"nprocs: \d+, min: [\d.]+, max: [\d.]+, avg: [\d.]+")}


def arguments(group, program, full):
    if group == "startup":
        return []
    if group == "collective":  # OSU's sizes go up to 1 MiB
        return ["-i", "10", "-x", "2"] if full else ["-m", "16384", "-i", "3", "-x", "1"]
    if group == "nonblocking":
        return ["-i", "10", "-x", "2"] if full else ["-m", "16", "-i", "3", "-x", "1"]
    return ["-i", "100", "-x", "10"] if full else ["-i", "3", "-x", "1"]


def figures_expected(group, program):
    return group != "startup" and program != "osu_barrier"


def run(launcher, program, ranks, ppn, cpu_model, args, platform_options=()):
    argv = command(launcher, program, *args, ranks=ranks, mpirun=True, cpu_model=cpu_model, timeout=600,
                   options=("--ppn", ppn, *platform_options))
    print("$", " ".join(argv), flush=True)
    result = run_command(argv, wall_timeout=700, env=launch_environment())
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
    if group == "nonblocking" and ppn == 1 and not full:
        print("skipped: the non-blocking collectives on 16 nodes of one rank run under tools/check --full "
              "(S4BXI_CHECK_FULL=1); 4 nodes of 4 run at every check")
        return SKIP
    failures = []
    for name in PROGRAMS[group]:
        program = folder / name
        if not program.exists():
            failures.append(f"{name}: not built ({program} is missing)")
            continue
        platform = () if full else PLATFORM_OPTIONS.get(name, ())
        result, wall = run(launcher, program, ranks, ppn, cpu_model, arguments(group, name, full), platform)
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
