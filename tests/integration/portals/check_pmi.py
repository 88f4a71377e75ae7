#!/usr/bin/env python3
"""PMI-1 bootstrap: 4 spawn-mode ranks (with 4, a barrier used to lose a waiter that
arrived while the last one completed it); a rank left alone in PMI_Barrier is
reported as a deadlock naming PMI_Barrier; 2 ranks started by Open MPI's mpirun, which
offers PMIx only, are answered by the simulation as in spawn mode (skipped without
mpirun); elsewhere the PMI entry points go to the real libpmi the program links
(fake_pmi.c), or, in a process that is not a rank, fail saying they are not supported."""
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import environment, launch  # noqa: E402
from testkit.mpi_env import root_consent  # noqa: E402

launcher, bootstrap, forward = sys.argv[1:4]
errors = []


def run(program, *arguments, ranks=None):
    """`ranks` None: the program alone, after `--` (not in spawn mode)."""
    return launch(launcher, program, *arguments, ranks=ranks, timeout=100, separate=not ranks)


def check(condition, what, result):
    if not condition:
        errors.append(f"{what}: status {result.returncode}\n--- stdout ---\n{result.stdout}"
                      f"--- stderr ---\n{result.stderr}")


four = run(bootstrap, ranks=4)
check(four.returncode == 0 and " FAIL " not in four.stdout, "4 ranks bootstrap through PMI", four)

stuck = run(bootstrap, "skip-barrier", ranks=2)
check(stuck.returncode not in (0, 124) and "deadlock" in stuck.stderr and "rank 0 " in stuck.stderr
      and "PMI_Barrier" in stuck.stderr, "a rank alone in PMI_Barrier is a deadlock naming it", stuck)

alone = run(bootstrap)
check(alone.returncode == 2 and "not supported yet: PMI_Initialized outside" in alone.stderr,
      "no PMI outside spawn mode: PMI_Initialized fails with a message", alone)

if shutil.which("mpirun"):
    under_mpirun = launch(launcher, bootstrap, ranks=2, mpirun=True, wall_timeout=100,
                          env=environment(root_consent(), mpi=True))
    check(under_mpirun.returncode == 0 and " FAIL " not in under_mpirun.stdout and "not supported" not in
          under_mpirun.stderr, "2 ranks under mpirun (PMIx only) bootstrap through the simulation's PMI-1", under_mpirun)
else:
    print("note: mpirun not found: PMI-1 under mpirun not checked (Debian's openmpi-bin: tools/setup installs it)")
spawned = run(forward, ranks=2)
check(spawned.returncode == 0 and sorted(spawned.stdout.split("\n")[:2]) == ["PMI rank 0", "PMI rank 1"],
      "spawn mode: the simulation answers before the program's libpmi", spawned)

command = run("env", "PMI_RANK=0", "PMI_SIZE=1", forward)
check(command.returncode == 0 and command.stdout.strip() == "PMI rank 42",
      "command mode: the program's libpmi answers", command)

if errors:
    sys.exit("\n".join(errors))
print("PMI-1: spawn mode, under mpirun, deadlock report, forwarding to a loaded libpmi")
