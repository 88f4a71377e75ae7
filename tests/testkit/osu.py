"""What the scripts that run the OSU micro-benchmarks 5.3 (built unmodified by
tools/build-osu, its directory recorded by tools/setup in BUILD_DIR/osu-prefix) share:
finding that build, reading the figures the programs print, and the choice between the
suite's cut-down runs and every size (S4BXI_CHECK_FULL=1, tools/check --full), and the MPI
programs of each group with their arguments (tests/mpi/run_osu.py, bench/validation.py)."""
import os
import re
from pathlib import Path

HOW_TO_BUILD = ("run tools/setup with the OSU 5.3 tarball beside the clone or named by S4BXI_OSU_SOURCE "
                "(docs/openmpi.md)")
# A figure line: the size, then one or more numbers (latency, bandwidth, rates...).
FIGURE = re.compile(r"^\s*(\d+)\s+([-\d.]+)", re.M)
# The MPI programs of each group, in OSU's folder of that group (mpi/pt2pt, mpi/one-sided,
# mpi/startup, mpi/collective).
MPI_PROGRAMS = {
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
# osu_acc_latency. Cut down, they run on a platform that orders 1024 B (and fetches 1024 B
# atomically): 16 times fewer atomics, 40 to 80 s each.
ONE_SIDED_ORDERING = tuple(word for limit in ("max_waw_ordered_size", "max_war_ordered_size", "max_fetch_atomic_size")
                           for table in ("limit_caps", "limits") for word in ("--set", f"nic.{table}.{limit}=1024"))
SLOW_ON_THE_DEFAULT_PLATFORM = {"osu_acc_latency": ONE_SIDED_ORDERING, "osu_get_acc_latency": ONE_SIDED_ORDERING}


def mpi_platform_options(program, full):
    """The launcher's platform options for an MPI program: none for `full` runs."""
    return () if full else SLOW_ON_THE_DEFAULT_PLATFORM.get(program, ())


def osu_directory(build):
    """The OSU build that tools/setup recorded for the build directory `build`, or raises
    LookupError saying how to provide one."""
    record = Path(build) / "osu-prefix"
    if not record.exists():
        raise LookupError(f"the OSU micro-benchmarks were not built ({record} is missing): {HOW_TO_BUILD}")
    return Path(record.read_text().strip())


def mpi_arguments(group, full):
    """The arguments of an MPI program of `group`: cut down so that the group stays short (3
    iterations; blocking collectives up to 16 KiB, non-blocking ones once up to 4 B) or, `full`,
    every size 100 times (blocking collectives 10; non-blocking ones 3)."""
    if group == "startup":
        return []
    if group == "collective":  # OSU's sizes go up to 1 MiB
        return ["-i", "10", "-x", "2"] if full else ["-m", "16384", "-i", "3", "-x", "1"]
    if group == "nonblocking":
        return ["-i", "3", "-x", "1"] if full else ["-m", "4", "-i", "1", "-x", "0"]
    return ["-i", "100", "-x", "10"] if full else ["-i", "3", "-x", "1"]


def figures(output):
    """{size: first figure} of the lines an OSU program printed for its sizes."""
    return {int(size): float(value) for size, value in FIGURE.findall(output)}


def every_size():
    """Whether the run wants every size at OSU's own counts (tools/check --full)."""
    return os.environ.get("S4BXI_CHECK_FULL") == "1"


def report(failures, not_run, success):
    """The end of a group: its programs not run yet with their reason, then `FAIL:` and the
    failures, or `ok: success`; the exit status."""
    for name, why in not_run.items():
        print(f"{name}: not supported yet: {why}")
    if failures:
        print("FAIL:\n" + "\n".join(failures))
        return 1
    print(f"ok: {success}")
    return 0
