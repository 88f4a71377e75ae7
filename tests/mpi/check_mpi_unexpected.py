#!/usr/bin/env python3
"""Short messages that land unexpected, many times, never get lost: mpi_unexpected.c's
20 000-round ping-pong under the measured CPU model with a CPU hog beside it, several runs,
Open MPI's overflow blocks cut to 4 KiB so that one fills every few hundred messages.

Open MPI's Portals MTL posts the receive while the NIC may be unlinking the block the
message landed in: the message's unexpected header used to be recorded after the
AUTO_UNLINK event write, and a receive posted meanwhile never claimed it (Debian's NetPIPE
ended in a deadlock report after a few hundred thousand round trips). The deterministic
form of the race is tests/integration/portals/overflow_race.c.

usage: check_mpi_unexpected.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
RUNS = 3
BLOCK = 4096  # bytes of each overflow block (Open MPI's default: 2 MiB)


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_unexpected"
    skip = why_skip(argv, program, launcher)
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    env = launch_environment()
    env.pop("LD_PRELOAD", None)
    env["OMPI_MCA_mtl_portals4_short_recv_size"] = str(BLOCK)
    errors = []
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for run_index in range(RUNS):
            run = launch(launcher, program, ranks=2, mpirun=True, cpu_model="measured", timeout=120,
                         wall_timeout=180, env=env)
            print(f"$ OMPI_MCA_mtl_portals4_short_recv_size={BLOCK} {' '.join(run.args)}\nstatus {run.returncode} "
                  f"{run.stdout.strip()}", flush=True)
            if run.returncode != 0:
                errors.append(f"run {run_index}: exit status {run.returncode}: {run.stderr[-1500:]}")
    finally:
        hog.kill()
        hog.wait()
    return verdict(errors, program.name, f"{RUNS} runs of 20000 round trips, every message found")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
