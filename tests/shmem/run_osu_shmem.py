#!/usr/bin/env python3
"""OSU micro-benchmarks 5.3's OpenSHMEM programs, unmodified (tools/build-osu links them
with SOS's oshcc), under s4bxi-launch.

usage: run_osu_shmem.py LAUNCHER BUILD_DIR GROUP CPU_MODEL [RANKS RANKS_PER_NODE]

GROUP is put-get (osu_oshm_put and osu_oshm_get with each of their memory arguments, heap
and global: they run on exactly 2 PEs) or others (the message rate, the atomics, the
barrier and the collectives, on RANKS PEs, RANKS_PER_NODE per simulated node; 2 and 1 by
default; osu_oshm_put_mr and osu_oshm_atomics with each memory argument, but put_mr only with
heap on more than 2 PEs). Every program must exit 0 with every PE finished and print a positive figure for
every size it runs (the atomics one for each of their twelve operations, the barrier its
one latency). put, get, put_mr and atomics take no option but their memory: they run
whole (a few seconds to a quarter of a minute each). The collectives and the barrier run 3
iterations (OSU's 200 warm-up iterations per size below 64 KiB stay: no option changes
them), collectives every size on 2 PEs and up to 8 bytes on more; with S4BXI_CHECK_FULL=1
(tools/check --full) every size at OSU's own iteration counts (10 per size on more than 2
PEs).
Exits 77 (skipped) when SOS or OSU's OpenSHMEM programs were not built, saying how to
provide them."""
import os
import sys
from pathlib import Path

from run_shmem import SKIP, run_one

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.osu import every_size, figures, osu_directory, report  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402

GROUPS = {
    "put-get": ["osu_oshm_put heap", "osu_oshm_put global", "osu_oshm_get heap", "osu_oshm_get global"],
    "others": ["osu_oshm_put_mr heap", "osu_oshm_put_mr global", "osu_oshm_atomics heap", "osu_oshm_atomics global",
               "osu_oshm_barrier", "osu_oshm_broadcast", "osu_oshm_collect", "osu_oshm_fcollect", "osu_oshm_reduce"],
}
# Where the memory argument only moves the buffer, one of them is enough on more PEs:
# osu_oshm_put_mr takes 20 s of wall time on 16 PEs.
ONLY_ON_2 = {"osu_oshm_put_mr global"}
# Not run yet, and why, by group: the group prints it (none today).
NOT_RUN = {}
COLLECTIVES = ("osu_oshm_broadcast", "osu_oshm_collect", "osu_oshm_fcollect", "osu_oshm_reduce")
# The sizes OSU's sources loop over: put and get 1 B to 1 MiB, put_mr 1 B to 4 MiB, the
# collectives 4 B (one 32-bit element) to their -m, 1 MiB by default.
LARGEST = {"osu_oshm_put": 1 << 20, "osu_oshm_get": 1 << 20, "osu_oshm_put_mr": 1 << 22}
SMALLEST = {name: 4 for name in COLLECTIVES}
# The collectives' -m on more than 2 PEs (on 2, every size: seconds each): on 16, each size
# costs 203 collectives and as many barriers, about 390 000 Portals operations for
# osu_oshm_fcollect (SOS's ring: 15 puts and waits per PE each time).
CUT_LARGEST = 8
ATOMICS = [f"shmem_{kind}_{op}" for kind in ("int", "longlong") for op in ("fadd", "finc", "add", "inc", "cswap", "swap")]
PROGRAM_TIMEOUT = 600  # s of wall time for one program: the longest takes under a minute here


def arguments(name, memory, ranks, full):
    """The command-line arguments of a program, and the largest size it then prints."""
    if memory:
        return [memory], LARGEST.get(name)
    if name == "osu_oshm_barrier":
        return ([] if full else ["-i", "3"]), None
    largest = 1 << 20 if full or ranks == 2 else CUT_LARGEST
    if full:
        return (["-i", "10"] if ranks > 2 else []), largest
    return ["-m", str(largest), "-i", "3"], largest


def what_is_wrong(name, largest, output):
    """Why the output of a program that ended well lacks its figures, or None."""
    rows = [line.split() for line in output.splitlines() if line.strip() and not line.startswith("#")]
    if name == "osu_oshm_atomics":  # each operation, its rate and its latency
        figures_of = {row[0]: row[1:] for row in rows}
        missing = [op for op in ATOMICS
                   if len(figures_of.get(op, [])) != 2 or not all(map(is_positive, figures_of[op]))]
        return f"no positive rate and latency for {', '.join(missing)}" if missing else None
    if name == "osu_oshm_barrier":
        return None if len(rows) == 1 and len(rows[0]) == 1 and is_positive(rows[0][0]) else \
            "not the one positive latency it prints"
    printed = figures(output)
    wanted = []
    size = SMALLEST.get(name, 1)
    while size <= largest:
        wanted.append(size)
        size *= 2
    missing = [size for size in wanted if size not in printed]
    if missing:
        return f"no figure for {len(missing)} of its {len(wanted)} sizes: {', '.join(map(str, missing))}"
    extra = sorted(set(printed) - set(wanted))
    if extra:
        return f"figures for sizes it does not run: {', '.join(map(str, extra))}"
    if not_positive := [size for size, value in printed.items() if value <= 0]:
        return f"figures that are not positive at {', '.join(map(str, not_positive))}"
    return None


def is_positive(word):
    try:
        return float(word) > 0
    except ValueError:
        return False


def main(argv):
    if len(argv) not in (5, 7):
        print(__doc__, file=sys.stderr)
        return 2
    launcher, build, group, model = str(Path(argv[1]).resolve()), Path(argv[2]), argv[3], argv[4]
    ranks, ppn = (int(argv[5]), int(argv[6])) if len(argv) == 7 else (2, 1)
    if group not in GROUPS or model not in ("zero", "measured"):
        print(f"unknown group {group!r} or CPU model {model!r}: groups {', '.join(GROUPS)}; models zero, measured",
              file=sys.stderr)
        return 2
    if group == "put-get" and ranks != 2:
        print("osu_oshm_put and osu_oshm_get run on exactly 2 PEs", file=sys.stderr)
        return 2
    try:
        sos_prefix(launcher, None)
        folder = osu_directory(build) / "openshmem"
    except LookupError as why:
        print(f"skipped: {why}")
        return SKIP
    if not folder.is_dir():
        print(f"skipped: OSU's OpenSHMEM programs were not built ({folder} is missing): tools/build-osu builds them "
              "once SOS is built (tools/setup, docs/openshmem.md)")
        return SKIP
    full = every_size()
    # The programs get the caller's environment but none of its S4BXI_* settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("S4BXI_")}
    failures = []
    entries = [entry for entry in GROUPS[group] if ranks == 2 or entry not in ONLY_ON_2]
    for entry in entries:
        name, _, memory = entry.partition(" ")
        program = folder / name
        if not program.exists():
            failures.append(f"{entry}: not built ({program} is missing)")
            continue
        args, largest = arguments(name, memory, ranks, full)
        print(f"$ s4bxi-launch --cpu-model {model} --ppn {ppn} -n {ranks} {name} {' '.join(args)}", flush=True)
        result, wall, makespan, note, output = run_one(launcher, program, ranks, model, PROGRAM_TIMEOUT, env,
                                                       arguments=args, ppn=ppn)
        problem = note if result != "PASS" else what_is_wrong(name, largest, output)
        simulated = f", {makespan:.4f} s simulated" if makespan is not None else ""
        print(f"{entry}: {result}, {wall:.1f} s of wall time{simulated}{': ' + problem if problem else ''}",
              flush=True)
        if result != "PASS" or problem:
            failures.append(f"{entry}: {problem or result}\n{output[-1500:]}")
    return report(failures, NOT_RUN.get(group, {}), f"{len(entries)} OSU OpenSHMEM runs ({group}), {ranks} PEs, "
                                                    f"{ppn} per node, --cpu-model {model}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
