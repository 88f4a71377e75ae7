#!/usr/bin/env python3
"""An MPI deadlock is reported, not waited out: rank 1 waits in MPI_Recv for a message that
rank 0 never sends, rank 0 waits for rank 1 in MPI_Finalize's PMIx fence. Rank 1 polls in
vain and rank 0's fence cannot end without it, so the launcher must stop with a deadlock
report naming both waits after the 10 s vain-polling window, not after --deadlock-timeout
(300 s by default, for ranks blocked outside in waits the simulation knows nothing of),
and leave no process behind.

usage: check_mpi_deadlock.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
WINDOW = 10  # s: the vain-polling window (docs/usage.md, --deadlock-timeout)


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_deadlock"
    reason = why_skip(argv, program, launcher)
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    line = command(launcher, program, ranks=2, mpirun=True, timeout=200)
    print("$", " ".join(line), flush=True)
    run = run_command(line, wall_timeout=250, env=launch_environment())
    elapsed = run.wall
    print(f"status {run.returncode} after {elapsed:.1f} s\n--- stdout\n{run.stdout}--- stderr\n{run.stderr}---")
    errors = []
    if run.returncode == 0:
        errors.append("exit status 0")
    if f"for {WINDOW} s of wall time" not in run.stderr or "deadlock" not in run.stderr:
        errors.append(f"no deadlock report naming the {WINDOW} s window")
    lines = run.stderr.splitlines()
    if not any(line.strip().startswith("rank 1 ") and "in the simulation in Ptl" in line for line in lines):
        errors.append("rank 1's wait (a Portals poll) is not named")
    if not any(line.strip().startswith("rank 0 ") and "PMIx_Fence" in line for line in lines):
        errors.append("rank 0's PMIx fence is not named")
    if elapsed > 6 * WINDOW:
        errors.append(f"took {elapsed:.0f} s")
    return verdict(errors, program.name, f"deadlock reported after {elapsed:.1f} s")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
