#!/usr/bin/env python3
"""A validation report: the same programs under s4bxi and natively on this host, side by side.

Each program runs once under `s4bxi-launch` (the launcher's default CPU model unless
--cpu-model names one) and once natively here with a plain `mpirun` (Open MPI over shared
memory, testkit.mpi_env.native_command), then one table per program gives what it printed
for each size (or, for an application, its own figures) under both, and the wall time of
both runs with their ratio, the slowdown. The native figures are this host's shared
memory, not a BXI network: they say how far apart the two are, not which one is right
(docs/validation.md quotes the thesis's figures measured on BXI hardware).

- OSU 5.3's MPI programs: point-to-point and one-sided on 2 ranks, one per node;
  collectives on 16 ranks, 4 per node (tests/mpi/run_osu.py's groups);
- OSU's OpenSHMEM programs on 2 PEs (under s4bxi only: SOS runs over s4bxi's Portals, there
  is no native OpenSHMEM here);
- LULESH on 8 ranks and Quicksilver on 4 (tests/apps/run_apps.py's runs).

usage: bench/validation.py [BUILD_DIR] [--quick] [--only NAME,...] [--cpu-model zero|measured]
                           [--out DIR] [--timeout S]

--quick runs osu_latency, osu_allreduce (4 ranks, 2 per node), osu_oshm_broadcast and a
small LULESH with few iterations and small sizes: a smoke test of the report. --only takes
program names (osu_latency, osu_oshm_put, lulesh...) or groups (pt2pt, one-sided,
collective, shmem, apps). --out DIR writes, after each program, DIR/validation.md (the
tables), DIR/validation.json (every number), DIR/NAME.csv (size, simulated, native), the
simulated run's summary (DIR/runs/NAME.json) and s4bxi-plot's pictures (DIR/plots/NAME/:
the simulated and native figures as NetPIPE's rows, which s4bxi-plot reads, and
netpipe.png, both curves against the size, with the model's one-way time for osu_latency).

Exit status 0 when every program ran, 1 when a run failed, 77 when none could run (OSU,
Open MPI's Portals components, SOS or the applications not built: each says how to build it).
"""
import argparse
import datetime
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.apps import PROGRAM, application_prefix, field, lulesh_arguments, quicksilver_deck  # noqa: E402
from testkit.launch import LaunchTimeout, command, run  # noqa: E402
from testkit.mpi_env import launch_environment, missing_components, native_command, native_environment  # noqa: E402
from testkit.osu import MPI_PROGRAMS, SLOW_ON_THE_DEFAULT_PLATFORM, figures, mpi_arguments, osu_directory  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402

SKIP = 77
# OSU's MPI groups in the report, their ranks and ranks per node, and their arguments
# (full report, --quick). The full report runs OSU's sizes 100 times after 10 warm-up
# iterations, as the thesis did (Section 6.6.1: 110 iterations), collectives 10 times up
# to 64 KiB; OSU 5.3's point-to-point programs take no -m: every size runs.
MPI_GROUPS = {
    "pt2pt": (2, 1, mpi_arguments("pt2pt", True), mpi_arguments("pt2pt", False)),
    "one-sided": (2, 1, mpi_arguments("one-sided", True), mpi_arguments("one-sided", False)),
    "collective": (16, 4, ["-m", "65536", *mpi_arguments("collective", True)], ["-m", "1024", "-i", "3", "-x", "1"]),
}
QUICK_COLLECTIVE = (4, 2)
# Print no figure per size: left out of the report.
NO_FIGURES = {"osu_barrier", "osu_init", "osu_hello"}
# OSU's OpenSHMEM programs with figures per size, on 2 PEs: put and get take only their
# memory; the collectives a largest size and iterations (OSU's 200 warm-up iterations per
# size below 64 KiB stay). osu_oshm_atomics and osu_oshm_barrier print no sizes.
SHMEM = {
    "osu_oshm_put": (["heap"], ["heap"]),
    "osu_oshm_get": (["heap"], ["heap"]),
    "osu_oshm_broadcast": (["-m", "65536", "-i", "20"], ["-m", "64", "-i", "3"]),
    "osu_oshm_collect": (["-m", "65536", "-i", "20"], None),
    "osu_oshm_fcollect": (["-m", "65536", "-i", "20"], None),
    "osu_oshm_reduce": (["-m", "65536", "-i", "20"], None),
}
QUICK = {"osu_latency", "osu_allreduce", "osu_oshm_broadcast", "lulesh"}
# The applications: ranks, ranks per node, and --quick's LULESH (a 4-element cube, 5 iterations).
APPS = {"lulesh": (8, 1), "quicksilver": (4, 1)}
QUICK_LULESH = (4, 5)
GROUP_OF_SHMEM, GROUP_OF_APPS = "shmem", "apps"
# What an application prints, as (label, pattern of its value).
APP_FIGURES = {
    "lulesh": [("iterations", r"Iteration count\s*=\s*(\d+)"),
               ("final origin energy", r"Final Origin Energy\s*=\s*(\S+)"),
               ("elapsed time (s)", r"^Elapsed time\s*=\s*(\S+)"),
               ("grind time (us/z/c, per domain)", r"^Grind time \(us/z/c\)\s*=\s*(\S+)"),
               ("FOM (z/s)", r"^FOM\s*=\s*(\S+)")],
    "quicksilver": [("cycleTracking, avg of ranks (us)", r"^cycleTracking\s+\d+\s+\S+\s+(\S+)"),
                    ("main, avg of ranks (us)", r"^main\s+\d+\s+\S+\s+(\S+)"),
                    ("Figure Of Merit (segments / cycle tracking time)", r"^Figure Of Merit\s+(\S+)")],
}


class Program:
    """One program of the report: how to run it, and what its runs gave."""

    def __init__(self, name, group, path, arguments, ranks, ppn, native=True, kind="osu"):
        self.name, self.group, self.path, self.arguments = name, group, Path(path), [str(a) for a in arguments]
        self.ranks, self.ppn, self.native, self.kind = ranks, ppn, native, kind
        self.runs = {}  # "simulated"/"native": {"wall", "status", "figures", "unit", "makespan", "error"}
        self.load = None


def selection(options):
    """The names and groups --only asked for (all when it is not given)."""
    return {word.strip() for word in options.only.split(",") if word.strip()} if options.only else None


def wanted(only, name, group, quick):
    if quick and name not in QUICK:
        return False
    return only is None or name in only or group in only


def programs(build, options, notes):
    """The programs to run, in order; notes gets why a group cannot run."""
    only, quick, found = selection(options), options.quick, []
    launcher = build / "launcher" / "s4bxi-launch"
    try:
        osu = osu_directory(build)
    except LookupError as why:
        osu = None
        notes.append(f"OSU's programs skipped: {why}")
    components = missing_components(launcher)
    if components and osu is not None:
        notes.append(f"OSU's MPI programs skipped: {components}")
    for group, (ranks, ppn, full, cut) in MPI_GROUPS.items():
        names = [name for name in MPI_PROGRAMS[group] if name not in NO_FIGURES
                 and wanted(only, name, group, quick)]
        for name in [name for name in names if name in SLOW_ON_THE_DEFAULT_PLATFORM]:
            names.remove(name)
            notes.append(f"{name} left out: its accumulates are 64 B Portals atomics on the default platform, "
                         "about 6 minutes of wall time (the tests run it on a platform ordering 1024 B; "
                         "docs/openmpi.md)")
        if not names or osu is None or components:
            continue
        if quick and group == "collective":
            ranks, ppn = QUICK_COLLECTIVE
        for name in names:
            found.append(Program(name, group, osu / "mpi" / group / name, cut if quick else full, ranks, ppn))
    names = [name for name in SHMEM if wanted(only, name, GROUP_OF_SHMEM, quick)]
    if names and osu is not None:
        try:
            sos_prefix(launcher, None)
            for name in names:
                full, cut = SHMEM[name]
                found.append(Program(name, GROUP_OF_SHMEM, osu / "openshmem" / name, cut if quick else full, 2, 1,
                                     native=False))
        except LookupError as why:
            notes.append(f"OSU's OpenSHMEM programs skipped: {why}")
    for application, (ranks, ppn) in APPS.items():
        if not wanted(only, application, GROUP_OF_APPS, quick):
            continue
        try:
            prefix = application_prefix(build, application)
        except LookupError as why:
            notes.append(f"{application} skipped: {why}")
            continue
        if components:
            notes.append(f"{application} skipped: {components}")
            continue
        if application == "lulesh":
            arguments = lulesh_arguments(False, *QUICK_LULESH) if quick else lulesh_arguments(False)
        else:
            arguments = ["-i", quicksilver_deck(ROOT, ranks)]
        found.append(Program(application, GROUP_OF_APPS, prefix / PROGRAM[application], arguments, ranks, ppn,
                             kind="app"))
    return found


def osu_figures(output):
    """({size: first figure}, that figure's name and unit from OSU's header) of an OSU output."""
    unit = "figure"
    for line in output.splitlines():
        columns = re.split(r"\s{2,}", line.lstrip("#").strip())
        if line.startswith("#") and len(columns) > 1 and columns[0] == "Size":
            unit = columns[1]
    return figures(output), unit


def app_figures(name, output):
    values = {}
    for label, pattern in APP_FIGURES[name]:
        value = field(pattern, output)
        if value is not None:
            values[label] = int(value) if value.isdigit() else float(value)
    return values


def record(program, side, done, summary=None):
    """What one run gave, kept in program.runs[side]."""
    entry = {"wall": round(done.wall, 3), "status": done.returncode}
    if program.kind == "osu":
        entry["figures"], entry["unit"] = osu_figures(done.stdout)
    else:
        entry["figures"], entry["unit"] = app_figures(program.name, done.stdout), None
    if summary is not None and summary.exists():
        try:
            entry["makespan"] = json.loads(summary.read_text()).get("makespan")
        except ValueError:
            pass
    if done.returncode != 0 or not entry["figures"]:
        entry["error"] = (f"exit status {done.returncode}" if done.returncode else "no figure printed") + \
            "\n" + (done.stdout[-1500:] + done.stderr[-1500:]).strip()
    program.runs[side] = entry


def run_program(program, launcher, options, keep):
    program.load = os.getloadavg()
    summary = keep / f"{program.name}.json"
    summary.unlink(missing_ok=True)
    line = command(launcher, program.path, *program.arguments, ranks=program.ranks,
                   mpirun=program.group != GROUP_OF_SHMEM, cpu_model=options.cpu_model, timeout=options.timeout,
                   options=("--ppn", program.ppn), summary=summary)
    for side, argv, environment in (("simulated", line, launch_environment()),
                                    ("native", native_command(program.path, program.ranks, program.arguments),
                                     native_environment())):
        if side == "native" and not program.native:
            continue
        print("$", shlex.join(map(str, argv)), flush=True)
        try:
            done = run(argv, wall_timeout=options.timeout + 60, env=environment, cwd=keep)
        except LaunchTimeout as timeout:
            program.runs[side] = {"wall": None, "status": None, "figures": {}, "unit": None,
                                  "error": f"no end within {timeout.timeout:g} s of wall time"}
            continue
        record(program, side, done, summary if side == "simulated" else None)
        entry = program.runs[side]
        print(f"{program.name} {side}: {len(entry['figures'])} figures, {entry['wall']:.1f} s of wall time"
              + (f": {entry['error'].splitlines()[0]}" if "error" in entry else ""), flush=True)


def number(value):
    """A figure as the tables show it: three decimals below 1 (3 significant digits below
    0.01), 4 significant digits from 100 000, else two decimals; a count whole."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    if value and abs(value) < 0.01 or abs(value) >= 1e5:
        return f"{value:.4g}" if abs(value) >= 1e5 else f"{value:.3g}"
    return f"{value:.3f}" if abs(value) < 1 else f"{value:.2f}"


def slowdown(program):
    simulated, native = program.runs.get("simulated", {}), program.runs.get("native", {})
    if simulated.get("wall") and native.get("wall") and "error" not in simulated and "error" not in native:
        return simulated["wall"] / native["wall"]
    return None


def markdown(programs, header, notes):
    """The report in Markdown: a summary of every program, then one table per program."""
    lines = [header, "", "| program | ranks (per node) | arguments | simulated run, wall s | simulated time, s | "
             "native run, wall s | slowdown |", "|---|---|---|---|---|---|---|"]
    for p in programs:
        simulated, native = p.runs.get("simulated", {}), p.runs.get("native", {})
        ratio = slowdown(p)
        lines.append(f"| {p.name} | {p.ranks} ({p.ppn}) | `{' '.join(map(display, p.arguments))}` | "
                     f"{number(simulated.get('wall'))} | {number(simulated.get('makespan'))} | "
                     f"{number(native.get('wall')) if p.native else 'no native run'} | "
                     f"{f'{ratio:.1f}' if ratio else '-'} |")
    for note in notes:
        lines += ["", f"- {note}"]
    for p in programs:
        simulated, native = p.runs.get("simulated", {}), p.runs.get("native", {})
        unit = simulated.get("unit") or native.get("unit")
        load = " ".join(f"{value:.2f}" for value in p.load) if p.load else "-"
        ratio = slowdown(p)
        lines += ["", f"### {p.name}", "",
                  f"{p.ranks} ranks, {p.ppn} per node, `{' '.join(map(display, p.arguments))}`; load average before "
                  f"the run {load}; wall time of the simulated run {number(simulated.get('wall'))} s, of the native "
                  f"run {number(native.get('wall')) + ' s' if p.native else '- (no native OpenSHMEM here)'}; slowdown "
                  f"{f'{ratio:.1f}' if ratio else '-'}", ""]
        key = "size (B)" if p.kind == "osu" else "figure"
        what = f" {unit}" if unit else ""
        if p.native:
            lines += [f"| {key} | simulated{what} | native{what} |", "|---|---|---|"]
        else:
            lines += [f"| {key} | simulated{what} |", "|---|---|"]
        keys = list(simulated.get("figures", {})) + [k for k in native.get("figures", {})
                                                     if k not in simulated.get("figures", {})]
        for k in keys:
            cells = [number(simulated.get("figures", {}).get(k))]
            if p.native:
                cells.append(number(native.get("figures", {}).get(k)))
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        for side in ("simulated", "native"):
            if "error" in p.runs.get(side, {}):
                lines += ["", f"The {side} run failed: {p.runs[side]['error'].splitlines()[0]}"]
    return "\n".join(lines) + "\n"


def display(argument):
    """An argument as the report shows it: an input file by its path in the tree."""
    path = Path(argument)
    return str(path.relative_to(ROOT)) if path.is_absolute() and ROOT in path.parents else argument


def netpipe_rows(figures, unit):
    """OSU's figures as NetPIPE's output (bytes, Mbit/s, one-way seconds), what s4bxi-plot
    reads: a latency (us) is a one-way time, a bandwidth (MB/s) gives the time of one
    message; None for other figures (message rates)."""
    rows = []
    for size, value in sorted(figures.items()):
        if size <= 0 or value <= 0:
            continue
        if "us" in unit:
            seconds = value * 1e-6
        elif "MB/s" in unit:
            seconds = size / (value * 1e6)
        else:
            return None
        rows.append(f"{size} {size * 8 / seconds / 1e6:.6g} {seconds:.9g}\n")
    return "".join(rows) or None


def plot(build, program, out, config):
    """s4bxi-plot's pictures of the simulated run (out/plots/NAME/): its figures against the
    size beside the native run's (and the model's one-way time for osu_latency). Returns the
    files written, or why there are none."""
    simulated, native = program.runs.get("simulated", {}), program.runs.get("native", {})
    summary = out / "runs" / f"{program.name}.json"
    if program.kind != "osu" or "error" in simulated or not summary.exists():
        return []
    rows = netpipe_rows(simulated["figures"], simulated.get("unit") or "")
    if rows is None:
        return []
    folder = out / "plots" / program.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "simulated.netpipe").write_text(rows)
    line = [str(build / "launcher" / "s4bxi-plot"), str(summary), "-o", str(folder),
            "--netpipe", str(folder / "simulated.netpipe"), "--label", f"{program.name} under s4bxi"]
    native_rows = None if "error" in native else netpipe_rows(native.get("figures", {}), native.get("unit") or "")
    if native_rows:
        (folder / "native.netpipe").write_text(native_rows)
        line += ["--beside", str(folder / "native.netpipe"), "--beside-label", f"{program.name} natively here"]
    if program.name == "osu_latency" and config:
        line += ["--config", str(config)]
    done = subprocess.run(line, capture_output=True, text=True)
    if done.returncode != 0:
        return [f"s4bxi-plot failed: {done.stderr.strip()[-300:]}"]
    return done.stdout.split()


def write_csv(out, program):
    """out/NAME.csv: each size (or figure) and its simulated and native value."""
    simulated, native = (program.runs.get(side, {}).get("figures", {}) for side in ("simulated", "native"))
    (out / f"{program.name}.csv").write_text("key,simulated,native\n" + "".join(
        f"{key},{simulated.get(key, '')},{native.get(key, '')}\n" for key in {**native, **simulated}))


def write_report(out, programs, started, argv, options, notes):
    """The report in Markdown, written with its numbers in JSON into out (None: nowhere)."""
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    header = (f"Started {started:%Y-%m-%d %H:%M} UTC on a host of {os.cpu_count()} CPUs, `{argv}`, CPU model "
              f"{options.cpu_model or 'the launcher default'}; at the end `uptime`: {uptime}")
    report = markdown(programs, header, notes)
    if out is not None:
        (out / "validation.md").write_text(report)
        (out / "validation.json").write_text(json.dumps({
            "started": f"{started:%Y-%m-%dT%H:%M:%SZ}", "command": argv, "cpus": os.cpu_count(),
            "uptime": uptime, "cpu_model": options.cpu_model, "notes": notes,
            "programs": [{"name": p.name, "group": p.group, "ranks": p.ranks, "ranks_per_node": p.ppn,
                          "arguments": [display(a) for a in p.arguments], "load_average": p.load,
                          "slowdown": slowdown(p), **p.runs} for p in programs]}, indent=1, default=str))
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", nargs="?", default="build", help="s4bxi build directory (default: build)")
    parser.add_argument("--quick", action="store_true", help="a few programs, small sizes, few iterations")
    parser.add_argument("--only", help="comma-separated program names or groups (pt2pt, one-sided, collective, "
                        "shmem, apps)")
    parser.add_argument("--cpu-model", choices=("zero", "measured"), help="the launcher's --cpu-model (default: "
                        "the launcher's own)")
    parser.add_argument("--out", help="folder for validation.md, validation.json, the CSV files and the plots")
    parser.add_argument("--timeout", type=float, default=1500, help="wall-clock limit of each run, s (default 1500)")
    options = parser.parse_args()
    build = Path(options.build).resolve()
    launcher = build / "launcher" / "s4bxi-launch"
    if not launcher.exists():
        sys.exit(f"{launcher} not found: build s4bxi first (ninja -C {options.build})")
    known = {*MPI_GROUPS, GROUP_OF_SHMEM, GROUP_OF_APPS, *SHMEM, *APPS,
             *(name for group in MPI_GROUPS for name in MPI_PROGRAMS[group] if name not in NO_FIGURES)}
    if unknown := sorted((selection(options) or set()) - known):
        parser.error(f"--only: unknown {', '.join(unknown)} (programs and groups: {', '.join(sorted(known))})")
    notes = []
    chosen = programs(build, options, notes)
    for note in notes:
        print(note)
    if not chosen:
        print("skipped: nothing to run" + (f" (--only {options.only})" if options.only else ""))
        return SKIP
    started = datetime.datetime.now(datetime.timezone.utc)
    argv = " ".join(["bench/validation.py"] + [display(a) for a in sys.argv[1:]])
    with tempfile.TemporaryDirectory(prefix="s4bxi-validation-") as scratch:
        out = Path(options.out).resolve() if options.out else Path(scratch)
        (out / "runs").mkdir(parents=True, exist_ok=True)
        config = out / "runs" / "config.txt"
        printed = subprocess.run([str(launcher), "--print-config"], capture_output=True, text=True)
        if printed.returncode == 0:
            config.write_text(printed.stdout)
        for done, program in enumerate(chosen, 1):
            run_program(program, launcher, options, out / "runs")
            if options.out:  # what has run so far, should the rest be stopped
                program.runs.setdefault("simulated", {})["plots"] = plot(build, program, out,
                                                                         config if config.exists() else None)
                write_csv(out, program)
                write_report(out, chosen[:done], started, argv, options, notes)
        report = write_report(out if options.out else None, chosen, started, argv, options, notes)
        print("\n" + report)
        if options.out:
            print(f"written: {out / 'validation.md'}, {out / 'validation.json'}")
    failed = [f"{p.name} ({side})" for p in chosen for side, entry in p.runs.items() if "error" in entry]
    if failed:
        print("FAIL: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
