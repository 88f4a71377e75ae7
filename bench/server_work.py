#!/usr/bin/env python3
"""Instructions the simulation server executes per simulated iteration, counted by
callgrind (valgrind): a measure of the server's CPU work per message that the host's load
does not move, unlike wall or CPU time on a shared 2-core machine.

Each workload runs under --cpu-model zero with N and with 2N iterations, the server under
`valgrind --tool=callgrind` (the ranks run natively), and the figure is
(instructions of 2N - instructions of N) / N: start-up and the end are left out. The
server waits for its ranks by spinning a little before it sleeps, so a count moves by
about 0.1 % from run to run; a change of the model's work per message shows above that.

Usage: bench/server_work.py [BUILD_DIR] [--simkernel PATH ...] [--only mr8,ar16]

--simkernel compares other server binaries (built from other commits, with the same
launcher and ranks of BUILD_DIR): each is given a column, and every workload runs on each
in turn. Needs valgrind (Debian's `valgrind` package).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# name, description, ranks, program, argument builder, N
WORKLOADS = [
    ("mr8", "Portals ping-pong 8 B, per round trip", 2, "message_rate", lambda n: [n, 8], 1000),
    ("mr64k", "Portals ping-pong 64 KiB, per round trip", 2, "message_rate", lambda n: [n, 65536], 200),
    ("ar2", "8 B allreduce, 2 ranks, per allreduce", 2, "allreduce", lambda n: [n], 1000),
    ("ar16", "8 B allreduce, 16 ranks, per allreduce", 16, "allreduce", lambda n: [n], 40),
    ("ar64", "8 B allreduce, 64 ranks, per allreduce", 64, "allreduce", lambda n: [n], 4),
]

WRAPPER = """#!/bin/sh
exec valgrind -q --tool=callgrind --callgrind-out-file="$SERVER_WORK_CALLGRIND_OUT" "$SERVER_WORK_SERVER" "$@"
"""


def instructions(launcher, wrapper, server, ranks, program, args, work):
    out = work / "callgrind.out"
    out.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("S4BXI_")}
    env.update(SERVER_WORK_CALLGRIND_OUT=str(out), SERVER_WORK_SERVER=str(server))
    # The --timeout also lets the server, slow under valgrind on a loaded host, start.
    command = [str(launcher), "-q", "--cpu-model", "zero", "--timeout", "1800", "--simkernel", str(wrapper),
               "--set", f"platform.nodes={ranks}", "-n", str(ranks), str(program), *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0 or not out.exists():
        sys.exit(f"server_work: {' '.join(command)} failed ({done.returncode}): {done.stderr[-2000:]}")
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    sys.exit(f"server_work: no instruction count in {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"))
    parser.add_argument("--simkernel", action="append", default=[], help="a server binary to compare")
    parser.add_argument("--only", help="comma-separated workload names")
    options = parser.parse_args()
    build = Path(options.build).resolve()
    launcher = build / "launcher" / "s4bxi-launch"
    servers = [Path(s).resolve() for s in options.simkernel] or [build / "simkernel" / "s4bxi-simkernel"]
    if not launcher.exists():
        sys.exit(f"server_work: {launcher} not found: build s4bxi first")
    if shutil.which("valgrind") is None:
        sys.exit("server_work: valgrind not found (apt-get install valgrind)")
    workloads = WORKLOADS
    if options.only:
        wanted = options.only.split(",")
        workloads = [w for w in WORKLOADS if w[0] in wanted]
    with tempfile.TemporaryDirectory(prefix="s4bxi-server-work-") as tmp:
        work = Path(tmp)
        wrapper = work / "callgrind-server"
        wrapper.write_text(WRAPPER)
        wrapper.chmod(0o755)
        print("| workload | " + " | ".join(str(s) for s in servers) + " |")
        print("|---|" + "---|" * len(servers))
        for name, label, ranks, program, arguments, n in workloads:
            cells = []
            for server in servers:
                counts = [instructions(launcher, wrapper, server, ranks, build / "bench" / program, arguments(k), work)
                          for k in (n, 2 * n)]
                cells.append(f"{(counts[1] - counts[0]) / n / 1000:.1f}k")
            print(f"| {label} (N = {n}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
