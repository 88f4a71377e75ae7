"""What the scripts that run MPI programs under s4bxi-launch (the MPI and application
tests, the benchmarks) share: their environment, whether Open MPI's Portals components
and the OSU build are there, the native run's command line, the end of a check script."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .launch import environment
from .osu import osu_directory


def launch_environment():
    """The test's environment without S4BXI_* and OMPI_MCA_* variables nor LD_PRELOAD
    (launch.environment): the run gets the launcher's own settings, not the caller's."""
    return environment(mpi=True)


def root_consent():
    """The variables by which mpirun accepts to run as root (it refuses otherwise): empty
    unless run as root."""
    return {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"} if os.geteuid() == 0 else {}


def native_environment():
    """launch_environment() for a native mpirun, outside the simulation (as root, mpirun
    wants to be told)."""
    return {**launch_environment(), **root_consent()}


def native_command(program, ranks, arguments=()):
    """The command that runs `program` natively here on `ranks` ranks, outside the
    simulation: Open MPI's shared-memory transport (ob1 over vader), as many ranks as asked
    whatever the cores, none bound to one."""
    return ["mpirun", "--oversubscribe", "--bind-to", "none", "--mca", "pml", "ob1", "--mca", "btl", "self,vader",
            "-np", str(ranks), str(program), *map(str, arguments)]


def missing_components(launcher):
    """Why Open MPI's Portals components cannot be used (their record, which tools/setup
    writes once they are built, is missing), or None."""
    record = Path(launcher).resolve().parent.parent / "openmpi-portals4-components"
    return None if record.exists() else f"Open MPI's Portals components were not built ({record} is missing)"


def osu_for_mpi(build, launcher):
    """The OSU build for the MPI tests (testkit.osu.osu_directory), or raises LookupError
    saying why they must be skipped: OSU or Open MPI's Portals components not built."""
    osu = osu_directory(build)
    if why := missing_components(launcher):
        raise LookupError(why)
    return osu


def why_skip(argv, program, launcher):
    """Why a check script that runs `program` through `launcher` must be skipped (--skip
    REASON from meson, the program or mpirun missing, the components not built), or None."""
    if "--skip" in argv:
        return argv[argv.index("--skip") + 1]
    if not Path(program).exists() or not shutil.which("mpirun"):
        return f"{Path(program).name} or mpirun missing"
    return missing_components(launcher)


def verdict(errors, program_name, success):
    """The end of a check script: adds the processes named program_name (or any name of a
    list) still running to errors, prints FAIL and the errors or `ok: success`, and returns
    the exit status."""
    names = [program_name] if isinstance(program_name, str) else program_name
    # One pgrep per name: pgrep matches nothing with a pattern over 15 characters.
    leftover = [pid for name in names
                for pid in subprocess.run(["pgrep", "-x", name], capture_output=True, text=True).stdout.split()]
    if leftover:
        errors.append(f"processes left behind: {leftover}")
    if errors:
        print("FAIL: " + "; ".join(errors), file=sys.stderr)
        return 1
    print(f"ok: {success}")
    return 0
