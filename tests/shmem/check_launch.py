#!/usr/bin/env python3
"""Starting an OpenSHMEM program: shmem_ring.c, compiled with SOS's oshcc, runs
- under `s4bxi-launch -n N` and `s4bxi-launch -np N`;
- under SOS's `oshrun -np N` and `oshrun -n N` with OSHRUN_LAUNCHER=s4bxi-launch (oshrun
  runs `$OSHRUN_LAUNCHER "$@"`), also when OSHRUN_LAUNCHER carries options of its own, and
  without it when s4bxi-launch is on PATH (SOS's configured default);
each rank on its own simulated node (two per node with Hydra's `-ppn 2`), exit status 0 and
the program's "ok"; a PE that exits with status 3 makes oshrun's status 3.

usage: check_launch.py LAUNCHER [--sos PREFIX]
Exit status 0 (pass), 1 (fail) or 77 (SOS is not built: see run_shmem.py)."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from run_shmem import SKIP, check_setup, verdict

HERE = Path(__file__).resolve().parent


def main():
    setup = check_setup(sys.argv)
    if setup is None:
        return SKIP
    launcher, prefix = setup
    env = {k: v for k, v in os.environ.items() if not k.startswith("S4BXI_") and k != "OSHRUN_LAUNCHER"}
    errors = []
    with tempfile.TemporaryDirectory(prefix="s4bxi-shmem-launch-") as work:
        work = Path(work)
        program = work / "shmem_ring"
        build = subprocess.run([str(prefix / "bin" / "oshcc"), "-O2", "-o", str(program), str(HERE / "shmem_ring.c")],
                               capture_output=True, text=True, env=env)
        if build.returncode != 0:
            print(f"FAIL: oshcc: {build.stderr}", file=sys.stderr)
            return 1
        oshrun = str(prefix / "bin" / "oshrun")
        summary = work / "summary.json"
        common = ["--cpu-model", "zero", "--timeout", "120", "--summary", str(summary)]
        # (what, command, environment, ranks, exit status, simulated nodes)
        cases = [
            ("s4bxi-launch -n 2", [launcher, *common, "-n", "2", str(program)], {}, 2, 0),
            ("s4bxi-launch -np 4", [launcher, *common, "-np", "4", str(program)], {}, 4, 0),
            ("oshrun -np 2", [oshrun, "-np", "2", str(program)],
             {"OSHRUN_LAUNCHER": launcher, "S4BXI_CPU_MODEL": "zero"}, 2, 0),
            ("oshrun -n 3", [oshrun, "-n", "3", str(program)], {"OSHRUN_LAUNCHER": launcher}, 3, 0),
            ("oshrun with launcher options", [oshrun, "-np", "4", str(program)],
             {"OSHRUN_LAUNCHER": " ".join([launcher, *common])}, 4, 0),
            ("oshrun, PE 1 exits with 3", [oshrun, "-np", "2", str(program), "1", "3"],
             {"OSHRUN_LAUNCHER": " ".join([launcher, *common])}, 2, 3),
            # SOS is configured with s4bxi-launch as oshrun's default launcher.
            ("oshrun, s4bxi-launch on PATH", [oshrun, "-np", "2", str(program)],
             {"PATH": f"{Path(launcher).parent}:{env.get('PATH', '/usr/bin:/bin')}"}, 2, 0),
            ("oshrun -np 4 -ppn 2 (Hydra's spelling)", [oshrun, "-np", "4", "-ppn", "2", str(program)],
             {"OSHRUN_LAUNCHER": " ".join([launcher, *common])}, 4, 0, 2),
        ]
        for what, command, extra, ranks, status, *nodes_wanted in cases:
            nodes_wanted = nodes_wanted[0] if nodes_wanted else ranks
            summary.unlink(missing_ok=True)
            run = subprocess.run(command, env={**env, **extra}, capture_output=True, text=True, timeout=300,
                                 stdin=subprocess.DEVNULL, cwd=work)
            problems = []
            if run.returncode != status:
                problems.append(f"status {run.returncode}, expected {status}")
            if f"shmem_ring: ok on {ranks} PEs" not in run.stdout:
                problems.append(f"no 'ok on {ranks} PEs' in its output")
            if "--summary" in " ".join(command) + extra.get("OSHRUN_LAUNCHER", ""):
                try:
                    result = json.loads(summary.read_text())
                    nodes = sorted({rank["node"] for rank in result["ranks"]})
                    if result["world_size"] != ranks or len(nodes) != nodes_wanted:
                        problems.append(f"world size {result['world_size']} on nodes {nodes}, expected {ranks} ranks "
                                        f"on {nodes_wanted} nodes")
                except (OSError, ValueError, KeyError) as why:
                    problems.append(f"no run summary ({why})")
            if problems:
                errors.append(f"{what}: {'; '.join(problems)}\n{run.stdout[-800:]}{run.stderr[-1500:]}")
            print(f"{what}: status {run.returncode}{' -- ' + '; '.join(problems) if problems else ''}")
    return verdict(errors, "s4bxi-launch -n/-np and oshrun -np/-n with OSHRUN_LAUNCHER run the program on one node "
                           "per PE")


if __name__ == "__main__":
    sys.exit(main())
