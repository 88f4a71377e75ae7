#!/usr/bin/env python3
"""MPI_Abort's error code is the launcher's exit status (mpi_abort.c: rank 3 aborts with 5),
under both CPU models, with the other ranks waiting or computing, several runs each: the
server reports the ranks mpirun stopped, and the launcher used to exit with the server's
status (10) when it heard of that before mpirun's own exit. No process may be left.

usage: check_mpi_abort.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
CODE = 5
RUNS = 3


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_abort"
    reason = why_skip(argv, program, launcher)
    if reason:
        print(f"SKIP: {reason}")
        return SKIP
    env = launch_environment()
    env.pop("LD_PRELOAD", None)
    errors = []
    for model in ("zero", "measured"):
        for extra in ([], ["compute"]):
            for _ in range(RUNS):
                run = launch(launcher, program, *extra, ranks=4, mpirun=True, cpu_model=model, timeout=60,
                             wall_timeout=120, env=env)
                print(f"$ {' '.join(run.args)}\nstatus {run.returncode}", flush=True)
                if run.returncode != CODE:
                    errors.append(f"{model} {extra}: exit status {run.returncode}, expected {CODE}")
                    print(run.stderr[-2000:])
    return verdict(errors, program.name, f"every run exited with MPI_Abort's code {CODE}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
