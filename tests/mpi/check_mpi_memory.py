#!/usr/bin/env python3
"""Memory follows what is in flight, not what was sent: a 4-rank MPI_Alltoall of 1 MiB per
peer (bench/mpi_alltoall.c), 100 then 1000 times, keeps the server under 300 MB, and the
longer run's server and ranks within a quarter (plus a few MiB) of the shorter run's.
Before the model released delivered messages, the server kept every payload: 12 GB for the
1000 rounds.

usage: check_mpi_memory.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
LIMIT = 300 * 10**6
SLACK = 8 * 2**20


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_alltoall"
    skip = why_skip(argv, program, launcher)
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    errors, peaks = [], {}
    for rounds in (100, 1000):
        with tempfile.TemporaryDirectory() as work:
            summary = Path(work) / "summary.json"
            run = launch(launcher, program, rounds, 1 << 20, ranks=4, mpirun=True, cpu_model=None, timeout=250,
                         summary=summary, wall_timeout=280, env=launch_environment())
            print(f"$ {' '.join(run.args)}\nstatus {run.returncode}\n{run.stdout}", flush=True)
            if run.returncode != 0:
                errors.append(f"{rounds} rounds: exit status {run.returncode}: {run.stderr[-1500:]}")
                continue
            data = json.loads(summary.read_text())
        peaks[rounds] = (data["server_peak_rss"], max(r["peak_rss"] for r in data["ranks"]))
        print(f"{rounds} rounds: server peak {peaks[rounds][0] / 2**20:.1f} MiB, largest rank "
              f"{peaks[rounds][1] / 2**20:.1f} MiB", flush=True)
    if len(peaks) == 2:
        (server_short, rank_short), (server_long, rank_long) = peaks[100], peaks[1000]
        if server_long > LIMIT:
            errors.append(f"the server's peak is over {LIMIT / 1e6:.0f} MB")
        if server_long > server_short * 1.25 + SLACK:
            errors.append("the server's peak grows with the run")
        if rank_long > rank_short * 1.25 + SLACK:
            errors.append("a rank's peak grows with the run")
    return verdict(errors, program.name, "memory stays flat over 1000 all-to-alls of 1 MiB per peer")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
