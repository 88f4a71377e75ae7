#!/usr/bin/env python3
"""Instructions the simulation server executes per simulated iteration, counted by
callgrind (valgrind): a measure of the server's CPU work per message that the host's load
does not move, unlike wall or CPU time on a shared 2-core machine.

Each workload runs under --cpu-model zero with N and with 2N iterations, the server under
`valgrind --tool=callgrind` (the ranks run natively), and the figure is
(instructions of 2N - instructions of N) / N: start-up and the end are left out. The
server waits for its ranks by spinning a little before it sleeps, so a count moves by
about 0.1 % from run to run; a change of the model's work per message shows above that.

Usage: bench/server_work.py [BUILD_DIR] [--simkernel PATH ...] [--network-model M ...] [--s4bxi-source DIR]
                            [--only mr8,ar16] [--quick]

--simkernel compares other server binaries (built from other commits, with the same
launcher and ranks of BUILD_DIR): each is given a column, and every workload runs on each
in turn. --s4bxi-source DIR adds the reference simulator S4BXI, built from that tree as by
bench/compare_simulators.py (and cached with it): the instructions of its whole process
(SimGrid, its NIC actors, the program's ranks as actors) per iteration of the same
programs, and the server's count divided by it. The ranks' own instructions are not in
the server's count (what they execute while they wait depends on the host's load, not on
the model). --s4bxi-source defaults to $S4BXI_REFERENCE_SOURCE, as for compare_simulators.py.
--network-model M (repeatable) runs each workload under each network model (detailed,
flow, or a schedule; docs/network-models.md), a column each, the models in turn.
--quick runs a tenth of the iterations: a smoke test, not a measurement. Needs valgrind
(Debian's `valgrind` package).
"""
import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

import compare_simulators

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.launch import command, environment, run  # noqa: E402

# (name, workload): a workload of compare_simulators.py, `n` the shorter run's iterations here.
Row = compare_simulators.Row
WORKLOADS = [
    ("mr8", Row("Portals ping-pong 8 B, per round trip", "pingpong", 2, 8, 1000, 0)),
    ("mr64k", Row("Portals ping-pong 64 KiB, per round trip", "pingpong", 2, 65536, 200, 0)),
    ("ar2", Row("8 B allreduce, 2 ranks, per allreduce", "allreduce", 2, 8, 1000, 0)),
    ("ar16", Row("8 B allreduce, 16 ranks, per allreduce", "allreduce", 16, 8, 40, 0)),
    ("ar64", Row("8 B allreduce, 64 ranks, per allreduce", "allreduce", 64, 8, 4, 0)),
]

WRAPPER = """#!/bin/sh
exec valgrind -q --tool=callgrind --callgrind-out-file="$SERVER_WORK_CALLGRIND_OUT" "$SERVER_WORK_SERVER" "$@"
"""


def instructions(launcher, wrapper, server, ranks, program, args, work, model):
    out = work / "callgrind.out"
    out.unlink(missing_ok=True)
    env = environment({"SERVER_WORK_CALLGRIND_OUT": str(out), "SERVER_WORK_SERVER": str(server)})
    # The --timeout also lets the server, slow under valgrind on a loaded host, start.
    line = command(launcher, program, *args, ranks=ranks, timeout=1800, settings=[f"platform.nodes={ranks}", f"network.model={model}"],
                   options=("--simkernel", wrapper))
    return counted(line, env, out)


def reference_instructions(argv, env, work):
    """Instructions of one run of the reference simulator, its whole process."""
    out = work / "callgrind-reference.out"
    out.unlink(missing_ok=True)
    return counted(["valgrind", "-q", "--tool=callgrind", f"--callgrind-out-file={out}", *argv], env, out)


def counted(line, env, out):
    """Runs the command `line`, which leaves a callgrind profile in `out`; returns its instruction count."""
    done = run(line, wall_timeout=None, env=env)
    if done.returncode != 0 or not out.exists():
        sys.exit(f"server_work: {' '.join(map(str, line))} failed ({done.returncode}): {done.stderr[-2000:]}")
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    sys.exit(f"server_work: no instruction count in {out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"))
    parser.add_argument("--simkernel", action="append", default=[], help="a server binary to compare")
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--network-model", action="append", default=[], help="a network model to run under")
    source_variable = compare_simulators.SOURCE_VARIABLE
    parser.add_argument("--s4bxi-source", type=Path, default=os.environ.get(source_variable) or None,
                        help="source tree of the reference simulator S4BXI "
                             f"(default: ${source_variable})")
    parser.add_argument("--quick", action="store_true", help="a tenth of the iterations: a smoke test")
    parser.add_argument("--cache", type=Path, default=compare_simulators.cache_root(),
                        help="where the reference is built (as for bench/compare_simulators.py)")
    options = parser.parse_args()
    os.environ.pop(source_variable, None)  # s4bxi-launch refuses S4BXI_* variables it does not know
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
    prefix = None
    if options.s4bxi_source:
        prefix = compare_simulators.build_reference(options.s4bxi_source, options.cache.expanduser())
    with tempfile.TemporaryDirectory(prefix="s4bxi-server-work-") as tmp:
        work = Path(tmp)
        wrapper = work / "callgrind-server"
        wrapper.write_text(WRAPPER)
        wrapper.chmod(0o755)
        reference = compare_simulators.Reference(build, work, prefix) if prefix else None
        ratio = "server ÷ S4BXI" if len(servers) == 1 else "last server ÷ S4BXI"
        models = options.network_model or ["detailed"]
        columns = [(server, model) for server in servers for model in models]
        header = [str(s) + ("" if models == ["detailed"] else f", {m}") for s, m in columns]
        header += ["S4BXI (one process)", ratio] if reference else []
        print("| workload | " + " | ".join(header) + " |")
        print("|---|" + "---|" * len(header))
        programs = compare_simulators.portals_programs(build)
        for _, row in workloads:
            n = max(2, row.n // 10) if options.quick else row.n
            per_iteration = []
            for server, model in columns:
                counts = [instructions(launcher, wrapper, server, row.ranks, programs[row.kind],
                                       compare_simulators.arguments(row, k, False), work, model) for k in (n, 2 * n)]
                per_iteration.append((counts[1] - counts[0]) / n)
            cells = [f"{count / 1000:.1f}k" for count in per_iteration]
            if reference:
                counts = [reference_instructions(*reference.command(row, k), work) for k in (n, 2 * n)]
                theirs = (counts[1] - counts[0]) / n
                cells += [f"{theirs / 1000:.1f}k", f"{per_iteration[-1] / theirs:.2f}"]
            print(f"| {row.label} (N = {n}) | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
