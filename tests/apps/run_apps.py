#!/usr/bin/env python3
"""LULESH 2.0 and Quicksilver, unmodified (tools/build-apps), under s4bxi-launch -- mpirun,
each checked by its own output and against the same program run natively here.

usage: run_apps.py LAUNCHER BUILD_DIR SOURCE_ROOT APPLICATION RANKS CPU_MODEL

  lulesh       lulesh2.0 -s 12 -i 30 on RANKS (a cube; with S4BXI_CHECK_FULL=1, tools/check
               --full, without -i: to the problem's end, 717 iterations on 8 ranks): the
               run makes as many iterations as the native run (same ranks, same
               arguments), its final origin energy equals the native run's to the 7 digits
               LULESH prints, and the energy's plane 0 on rank 0 is symmetric (MaxRelDiff
               below SYMMETRY)
  quicksilver  qs -i tests/apps/quicksilver/qs<RANKS>.inp: every cycle's balance tally
               holds (particles gained = particles lost, each cycle starts with the last
               one's census), Quicksilver's own checks of its CORAL benchmark mode pass
               (reaction ratios, facet crossings against collisions, no particle lost),
               and every cycle's tallies equal the native run's (a particle carries its
               random state, so the counts do not depend on the order of messages)

Exits 77 (skipped) when the application or Open MPI's Portals components were not built,
saying how to provide them."""
import hashlib
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run  # noqa: E402
from testkit.apps import LULESH_ITERATIONS, application_prefix, field, lulesh_arguments, quicksilver_deck  # noqa: E402
from testkit.mpi_env import launch_environment, missing_components, native_command, native_environment  # noqa: E402

SKIP = 77
TIMEOUT = 1500  # seconds of wall time for one run under the launcher
# The mesh is symmetric about its origin's planes: a halo exchanged wrongly breaks that by
# far more than rounding does.
SYMMETRY = 1e-8
# Fluence homogeneity, Quicksilver's fourth check, needs far more particles than a test
# can afford ("try running more particles or more cycles"); it is not required.
QS_CHECKS = ("Absorption / Fission / Scatter Ratios maintained",
             "Collision to Facet Crossing Ratio maintained",
             "No Particles Lost During Run")
QS_COLUMNS = ("start", "source", "rr", "split", "absorb", "scatter", "fission", "produce", "collisn", "escape",
              "census", "num_seg")


def run_native(program, ranks, args, inputs, keep):
    """The program's output run natively here (Open MPI's shared-memory transport), kept in
    the folder keep under the checksum of the program, its arguments and its input files:
    the test under the other CPU model reads it instead of paying for a second run (16
    ranks polling on 2 cores take more than half a minute). None when the run fails."""
    line = native_command(program, ranks, args)
    digest = hashlib.sha256(" ".join(line).encode())
    for path in (program, *inputs):
        digest.update(Path(path).read_bytes())
    kept = keep / f"native-{program.name}-{ranks}-{digest.hexdigest()[:16]}.out"
    if kept.exists():
        print(f"native output: {kept}")
        return kept.read_text()
    print("$", " ".join(line), flush=True)
    result = run(line, wall_timeout=TIMEOUT, env=native_environment())
    print(f"native exit {result.returncode}, {result.wall:.1f} s of wall time", flush=True)
    if result.returncode != 0:
        print(result.stdout[-2000:] + result.stderr[-2000:])
        return None
    keep.mkdir(parents=True, exist_ok=True)
    kept.write_text(result.stdout)
    return result.stdout


def run_simulated(launcher, program, ranks, cpu_model, args):
    line = command(launcher, program, *args, ranks=ranks, mpirun=True, cpu_model=cpu_model, timeout=TIMEOUT)
    print("$", " ".join(line), flush=True)
    result = run(line, wall_timeout=TIMEOUT + 120, env=launch_environment())
    print(f"exit {result.returncode}, {result.wall:.1f} s of wall time", flush=True)
    return result


def check_lulesh(prefix, launcher, ranks, cpu_model, keep):
    side = round(ranks ** (1 / 3))
    if side ** 3 != ranks:
        return [f"LULESH runs on a cube number of ranks, not {ranks}"]
    program = prefix / "lulesh2.0"
    args = lulesh_arguments(os.environ.get("S4BXI_CHECK_FULL") == "1")
    native = run_native(program, ranks, args, [], keep)
    reference = field(r"Final Origin Energy\s*=\s*(\S+)", native or "")
    iterations = field(r"Iteration count\s*=\s*(\d+)", native or "")
    if reference is None or iterations is None:
        return ["the native run failed or printed no final origin energy"]
    result = run_simulated(launcher, program, ranks, cpu_model, args)
    out = result.stdout
    print(out[out.find("Run completed"):] if "Run completed" in out else out[-3000:])
    if result.returncode != 0 or "Run completed" not in out:
        return [f"exit status {result.returncode}, no 'Run completed'\n{out[-2000:]}{result.stderr[-3000:]}"]
    errors = []
    if field(r"MPI tasks\s*=\s*(\d+)", out) != str(ranks):
        errors.append(f"not on {ranks} MPI tasks")
    done = field(r"Iteration count\s*=\s*(\d+)", out)
    if done != iterations or ("-i" in args and done != str(LULESH_ITERATIONS)):
        errors.append(f"{done} iterations, natively {iterations}")
    energy = field(r"Final Origin Energy\s*=\s*(\S+)", out)
    if energy is None or float(energy) != float(reference):
        errors.append(f"final origin energy {energy}, natively {reference}")
    relative = field(r"MaxRelDiff\s*=\s*(\S+)", out)
    if "Testing Plane 0 of Energy Array" not in out or relative is None or not float(relative) < SYMMETRY:
        errors.append(f"plane 0 of the energy is not symmetric: MaxRelDiff {relative} (limit {SYMMETRY})")
    return errors


def tallies(text):
    """Quicksilver's balance table: one {column: count} per cycle, in order."""
    header = re.search(r"^cycle\s+(.*)$", text, re.M)
    if not header:
        return []
    names = header.group(1).split()
    rows = []
    for line in text[header.end():].split("\n")[1:]:
        words = line.split()
        if not words or not words[0].isdigit():
            break
        rows.append(dict(zip(names, (int(word) for word in words[1:len(QS_COLUMNS) + 1]))))
    return rows


def balance_errors(rows, cycles):
    errors = [] if len(rows) == cycles else [f"{len(rows)} cycles tallied, not {cycles}"]
    previous_census = 0
    for cycle, row in enumerate(rows):
        if set(QS_COLUMNS) - row.keys():
            return errors + [f"cycle {cycle}: columns {sorted(set(QS_COLUMNS) - row.keys())} missing"]
        gained = row["start"] + row["source"] + row["produce"] + row["split"]
        lost = row["absorb"] + row["census"] + row["escape"] + row["rr"] + row["fission"]
        if gained != lost:
            errors.append(f"cycle {cycle}: {gained} particles gained, {lost} lost")
        if row["start"] != previous_census:
            errors.append(f"cycle {cycle} starts with {row['start']} particles, the census before had {previous_census}")
        previous_census = row["census"]
    return errors


def check_quicksilver(prefix, launcher, source_root, ranks, cpu_model, keep):
    deck = quicksilver_deck(source_root, ranks)
    if not deck.exists():
        return [f"no input deck for {ranks} ranks ({deck})"]
    cycles = int(field(r"^\s*nSteps:\s*(\d+)", deck.read_text()))
    program = prefix / "qs"
    args = ["-i", str(deck)]
    native = run_native(program, ranks, args, [deck], keep)
    if not tallies(native or ""):
        return ["the native run failed or printed no tallies"]
    result = run_simulated(launcher, program, ranks, cpu_model, args)
    out = result.stdout
    print(out[out.find("\ncycle"):] if "\ncycle" in out else out[-3000:])
    if result.returncode != 0:
        return [f"exit status {result.returncode}\n{out[-2000:]}{result.stderr[-3000:]}"]
    rows = tallies(out)
    errors = balance_errors(rows, cycles)
    for check in QS_CHECKS:
        if not re.search(r"^PASS:: " + re.escape(check), out, re.M):
            errors.append(f"Quicksilver's check '{check}' did not pass")
    if rows != tallies(native):
        errors.append("the tallies differ from the native run's")
    return errors


def main(argv):
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    launcher, build, source_root, application = argv[1], Path(argv[2]), Path(argv[3]), argv[4]
    ranks, cpu_model = int(argv[5]), argv[6]
    if application not in ("lulesh", "quicksilver"):
        print(f"unknown application {application!r}: lulesh or quicksilver", file=sys.stderr)
        return 2
    try:
        prefix = application_prefix(build, application)
    except LookupError as why:
        print(f"skipped: {why}")
        return SKIP
    if why := missing_components(launcher):
        print(f"skipped: {why}")
        return SKIP
    keep = build / "tests" / "apps"
    if application == "lulesh":
        errors = check_lulesh(prefix, launcher, ranks, cpu_model, keep)
    else:
        errors = check_quicksilver(prefix, launcher, source_root, ranks, cpu_model, keep)
    if errors:
        print("FAIL:\n" + "\n".join(errors))
        return 1
    print(f"ok: {application} on {ranks} ranks, --cpu-model {cpu_model}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
