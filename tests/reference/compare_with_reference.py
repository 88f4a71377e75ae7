#!/usr/bin/env python3
"""Run the same raw Portals 4 programs under the reference simulator (S4BXI, public
repository S4BXI/S4BXI) and under s4bxi, on matching two-node platforms, and print their
simulated timelines side by side.

The reference must already be built and installed (this script never downloads or builds
it). Its install prefix is the first argument: PREFIX/bin/s4bximain, PREFIX/include/portals4.h
and PREFIX/lib/libportals.so* must exist. Building it against Debian's SimGrid 3.32 takes a
CMake configure with -DCMAKE_INSTALL_PREFIX=PREFIX, `make -j2 && make install`; its two
submodules must be present (pugixml; cmake/Modules, where a FindSimGrid.cmake that locates
the installed SimGrid and an empty `add_pandoc_man` function are enough).
bench/compare_simulators.py --s4bxi-source DIR builds it that way into the project's cache,
with or without the submodules, and prints the install prefix it uses.

Programs (all built here with the system C compiler):
  pingpong  tests/integration/portals/pingpong.c   Put ping-pong, 8 B .. 1 MiB, NO_ACK_REQ;
                                                   compared: the one-way latency it prints
  timeline  tests/integration/portals/timeline.c   single Put/Get/Atomic/FetchAtomic/Swap
  sweep     compare_sweep.c (next to this script)  single Put and Get at 8 B, 64 B, 1 KiB,
                                                   64 KiB, 1 MiB; Atomic 8 B..1 KiB;
                                                   FetchAtomic 8 and 64 B
  get_after_put tests/integration/portals/get_after_put.c  an 8 B and a 512 B Get, alone
                                                   and right after a completed 1 MiB Put
  late_wait compare_late_wait.c (next to this      PtlEQWait called after an event was
            script; not run by default)            written but before its hand-over latency:
                                                   a documented deviation (docs/model.md)
For timeline, sweep, get_after_put and late_wait, each step (call return, each event obtained from PtlEQWait) is
compared as its date minus the date of the call, so the different clock origins of the two
simulators (s4bxi's CLOCK_MONOTONIC starts at 1000 s) do not matter.

Only the build glue differs between the two sides, never the programs' logic:
  * the reference runs every rank inside one process, so `getenv("S4BXI_RANK")` is
    redirected (-Dgetenv=compare_getenv) to a function that answers the reference's rank;
  * on both sides PtlNIFini is wrapped (-DPtlNIFini=compare_PtlNIFini) to sleep 1 ms of
    simulated time first. The reference dereferences the initiator's NI when it issues a
    deferred GET/FETCH_ATOMIC event at the target, and crashes if the initiator has already
    finalised it (use after free); the pause lets those events happen first. It is applied
    to s4bxi too so that both runs and traces stay identical up to the end.
The reference runs with S4BXI_CPU_THRESHOLD=1 (computations shorter than 1 s are ignored,
its equivalent of --cpu-model zero) and real memory (use_real_memory=true), every node with
TX/RX actors of VN 1 and 3 and an E2E actor. Its platform XML is generated from the
effective s4bxi configuration (`s4bxi-launch --print-config`): same PCIe limiter/shared
links, BXI links, core speed, one switch; NIDs 0 and 1 as in s4bxi. The NIC knobs
s4bxi reports (E2E, model_pci, quick ACKs, retries...) are passed to the reference as its
S4BXI_* environment variables; knobs the reference does not have must be at their
defaults (the script stops otherwise).

With --trace, both simulators write their CSV traces (the same format) and the rows are
paired by (operation type, initiator NID, target NID) in start order and compared.

Exit status: 0 when every compared value agrees within --abs-tolerance ns (default 1 ns,
the resolution of the programs' clock readings; --tolerance PERCENT also accepts a relative
difference, none by default) or is a difference listed in same_instant_differences.toml
(next to this script: a step where s4bxi's same-instant order, docs/model.md, orders two
actions of one date otherwise than the reference, with the size of the difference), 1
otherwise, 2 on a usage or run error. A listed difference that is no longer seen is
reported, so that the list stays true.

Example:
  compare_with_reference.py /opt/s4bxi-reference --s4bxi . --trace
"""
import argparse
import tomllib
import csv
import os
import re
import shutil
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, environment  # noqa: E402
from testkit.reference import (GLUE_COMMON, GLUE_REFERENCE, STEPS_DIR, build_reference, fail,  # noqa: E402
                               reference_deployment_xml, reference_env, reference_platform_xml, run, s4bxi_config,
                               set_options)

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------
# The reference's trace operation codes (same numbering as s4bxi's --trace).
TRACE_OPS = ["E2E_ACK", "PTL_ACK", "PTL_GET_RESPONSE", "PTL_PUT", "PTL_GET", "PTL_ATOMIC", "PTL_FETCH_ATOMIC",
             "PTL_FETCH_ATOMIC_RESPONSE", "PCI_PIO_PAYLOAD", "PCI_DMA_PAYLOAD", "PCI_DMA_REQUEST",
             "PCI_PAYLOAD_WRITE", "PCI_EVENT", "PCI_COMMAND", "COMPUTE"]


# ---------------------------------------------------------------------------------------
# s4bxi side

def build_s4bxi(cc, root, build, source, glue, out):
    """An ordinary executable linked with s4bxi's libportals. The glue is compiled apart,
    without the renaming, so that its PtlNIFini is the real one."""
    lib = build / "libinterpose"
    include = f"-I{root / 'include'}"
    run([cc, "-O2", "-c", include, f"-I{root / STEPS_DIR}", "-DPtlNIFini=compare_PtlNIFini", source, "-o",
         out.with_suffix(".o")])
    run([cc, "-O2", "-c", include, glue, "-o", glue.with_suffix(".o")])
    run([cc, "-o", out, out.with_suffix(".o"), glue.with_suffix(".o"), f"-L{lib}", "-lportals",
         f"-Wl,-rpath,{lib}"])


def run_s4bxi(launcher, platform, settings, program, args, trace_dir):
    options = ["--platform", platform] + (["--trace", trace_dir] if trace_dir else [])
    return run(command(launcher, program, *args, settings=settings, options=options), env=environment(),
               timeout=600).stdout


# ---------------------------------------------------------------------------------------
# Reference side

def run_reference(prefix, work, platform_xml, library, args, env, e2e):
    deploy = work / f"deploy_{library.stem}.xml"
    deploy.write_text(reference_deployment_xml(args, e2e))
    result = run([prefix / "bin" / "s4bximain", platform_xml, deploy, library, library.stem.removeprefix("lib")],
                 env=env, cwd=work, timeout=600)
    return result.stdout


# ---------------------------------------------------------------------------------------
# Comparison

class Table:
    """Collects rows (label, reference, s4bxi) and prints them with their difference."""

    def __init__(self, title, unit, rel_tol, abs_tol, listed=None):
        self.title, self.unit, self.rel_tol, self.abs_tol = title, unit, rel_tol, abs_tol
        self.rows = []
        self.failures = 0
        self.listed = listed or {}  # {case label: expected difference}, same_instant_differences.toml
        self.listed_seen = set()

    def add(self, label, reference, s4bxi):
        self.rows.append((label, reference, s4bxi))

    def print(self):
        print(f"\n## {self.title}\n")
        print(f"| {'case':30s} | {'reference ' + self.unit:>16s} | {'s4bxi ' + self.unit:>16s} | "
              f"{'diff':>10s} | {'rel %':>8s} | |")
        print(f"|{'-' * 32}|{'-' * 18}|{'-' * 18}|{'-' * 12}|{'-' * 10}|--|")
        for label, ref, ours in self.rows:
            if ref is None or ours is None:
                self.failures += 1
                print(f"| {label:30s} | {str(ref):>16s} | {str(ours):>16s} | {'':>10s} | {'':>8s} | MISSING |")
                continue
            diff = ours - ref
            rel = 100.0 * diff / ref if ref else 0.0
            ok = abs(diff) <= self.abs_tol or abs(rel) <= self.rel_tol
            note = "" if ok else "**>tol**"
            if not ok and label in self.listed and abs(diff - self.listed[label]) <= self.abs_tol:
                ok, note = True, "listed"
                self.listed_seen.add(label)
            self.failures += not ok
            print(f"| {label:30s} | {ref:16.3f} | {ours:16.3f} | {diff:10.3f} | {rel:8.3f} | {note} |")
        for label in sorted(set(self.listed) - self.listed_seen):
            print(f"* listed in same_instant_differences.toml but not seen: {label}")


def listed_differences(program, settings):
    """{case label: difference in ns} of same_instant_differences.toml for this program and
    these --set options."""
    path = HERE / "same_instant_differences.toml"
    if not path.exists():
        return {}
    with path.open("rb") as f:
        entries = tomllib.load(f).get("difference", [])
    wanted = sorted(settings)
    listed = {}
    for entry in entries:
        for key in ("program", "case", "difference_ns", "first", "second"):
            if key not in entry:
                fail(f"{path}: an entry lacks '{key}': {entry}")
        if entry["program"] == program and sorted(entry.get("settings", [])) == wanted:
            listed[entry["case"]] = float(entry["difference_ns"])
    return listed


def steps_relative_to_call(output):
    """{case: {step: date - date of the call}} from the 'case=... step=... t=...' lines."""
    dates = defaultdict(dict)
    for case, step, t in re.findall(r"case=(\S+) step=(\S+) t=(\d+)", output):
        dates[case][step] = int(t)
    return {case: {step: t - steps["call"] for step, t in steps.items() if step != "call"}
            for case, steps in dates.items() if "call" in steps}


def compare_steps(table, reference_out, s4bxi_out, skip=()):
    ref, ours = steps_relative_to_call(reference_out), steps_relative_to_call(s4bxi_out)
    for case in ours:
        if case in skip:
            continue
        for step in ours[case]:
            table.add(f"{case} {step}", ref.get(case, {}).get(step), ours[case][step])
    for case in ref:
        for step in ref[case]:
            if case not in skip and step not in ours.get(case, {}):
                table.add(f"{case} {step}", ref[case][step], None)


def compare_pingpong(table, reference_out, s4bxi_out):
    pattern = r"pingpong size=(\d+) iterations=\d+ one_way_ns=([\d.]+)"
    ref = {int(s): float(v) for s, v in re.findall(pattern, reference_out)}
    ours = {int(s): float(v) for s, v in re.findall(pattern, s4bxi_out)}
    for size in sorted(set(ref) | set(ours)):
        table.add(f"one-way {size} B", ref.get(size), ours.get(size))


def read_trace(directory):
    rows = []
    files = sorted(Path(directory).glob("log_*.csv"), key=lambda p: int(re.findall(r"\d+", p.name)[-1]))
    for path in files:
        with path.open() as f:
            for row in csv.DictReader(f):
                rows.append((int(row["operation_type"]), int(row["initiator_nid"]), int(row["target_nid"]),
                             float(row["start_time"]), float(row["end_time"])))
    return rows


def compare_traces(name, reference_dir, s4bxi_dir, abs_tol_ns, rel_tol):
    """Pairs the rows of both traces by (op, initiator, target) in start order; reports per
    operation type the largest start and duration differences, after removing the constant
    shift between the two clocks (the median start difference)."""
    ref, ours = read_trace(reference_dir), read_trace(s4bxi_dir)
    groups_ref, groups_ours = defaultdict(list), defaultdict(list)
    for r in ref:
        groups_ref[r[:3]].append(r)
    for r in ours:
        groups_ours[r[:3]].append(r)
    pairs, unpaired = [], []
    for key in sorted(set(groups_ref) | set(groups_ours)):
        a = sorted(groups_ref.get(key, []), key=lambda r: (r[3], r[4]))
        b = sorted(groups_ours.get(key, []), key=lambda r: (r[3], r[4]))
        pairs += list(zip(a, b))
        if len(a) != len(b):
            unpaired.append((key, len(a), len(b)))
    shifts = sorted(b[3] - a[3] for a, b in pairs)
    shift = shifts[len(shifts) // 2] if shifts else 0.0
    print(f"\n## Trace rows, {name}: {len(ref)} reference, {len(ours)} s4bxi; "
          f"clock shift s4bxi - reference = {shift * 1e9:.3f} ns (removed)\n")
    for key, n_ref, n_ours in unpaired:
        print(f"* {TRACE_OPS[key[0]]} {key[1]}->{key[2]}: {n_ref} rows in the reference, {n_ours} in s4bxi")
    stats = defaultdict(lambda: [0, 0.0, 0.0, None])  # count, max |dstart|, max |dduration|, worst pair
    failures = 0
    offending = []
    for a, b in pairs:
        d_start = (b[3] - a[3] - shift) * 1e9
        d_duration = ((b[4] - b[3]) - (a[4] - a[3])) * 1e9
        s = stats[a[0]]
        s[0] += 1
        bad = abs(d_start) > abs_tol_ns or (abs(d_duration) > abs_tol_ns and
                                            abs(d_duration) > rel_tol / 100 * (a[4] - a[3]) * 1e9)
        failures += bad
        if bad:
            offending.append((a, b))
        if abs(d_start) > s[1]:
            s[1] = abs(d_start)
        if abs(d_duration) > abs(s[2]):
            s[2], s[3] = d_duration, (a, b)
    print(f"| {'operation':26s} | {'rows':>5s} | {'max |d start| ns':>16s} | {'max d duration ns':>17s} | worst row (ref / s4bxi, ns) |")
    print(f"|{'-' * 28}|{'-' * 7}|{'-' * 18}|{'-' * 19}|----|")
    for op in sorted(stats):
        count, d_start, d_duration, worst = stats[op]
        detail = ""
        if worst and abs(d_duration) > abs_tol_ns:
            a, b = worst
            detail = (f"{a[1]}->{a[2]} start {a[3] * 1e9:.2f}: {(a[4] - a[3]) * 1e9:.2f} / "
                      f"{(b[4] - b[3]) * 1e9:.2f}")
        print(f"| {TRACE_OPS[op]:26s} | {count:5d} | {d_start:16.3f} | {d_duration:17.3f} | {detail} |")
    for a, b in offending[:12]:
        print(f"* {TRACE_OPS[a[0]]} {a[1]}->{a[2]}: reference {a[3] * 1e9:.2f}..{a[4] * 1e9:.2f} ns, "
              f"s4bxi {b[3] * 1e9:.2f}..{b[4] * 1e9:.2f} ns")
    if len(offending) > 12:
        print(f"* ... {len(offending) - 12} more")
    print(f"\n{failures} of {len(pairs)} paired rows differ by more than {abs_tol_ns} ns in start, or in duration "
          f"by more than {abs_tol_ns} ns and {rel_tol} %")
    return failures + len(unpaired)


# ---------------------------------------------------------------------------------------

def find_s4bxi_root():
    """The s4bxi source tree this script lives in, if any (for when it is kept in the repository)."""
    for parent in HERE.parents:
        if (parent / "launcher").is_dir() and (parent / "simkernel").is_dir():
            return parent
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reference", type=Path, help="install prefix of the built reference simulator")
    parser.add_argument("--s4bxi", type=Path, default=find_s4bxi_root(), help="s4bxi source tree")
    parser.add_argument("--build", type=Path, help="s4bxi build directory (default: S4BXI/build)")
    parser.add_argument("--platform", type=Path, help="s4bxi platform file (default: S4BXI/platforms/quito.toml)")
    parser.add_argument("--programs", default="pingpong,timeline,sweep,get_after_put",
                        help="comma-separated list; late_wait shows a documented deviation (docs/model.md, "
                             "\"Validation against the reference simulator\")")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="s4bxi-launch --set for both sides (NIC knobs the reference also has, "
                             "e.g. nic.e2e=false, nic.quick_acks=true, nic.model_pci=false)")
    parser.add_argument("--trace", action="store_true", help="also compare the CSV traces row by row")
    parser.add_argument("--work", type=Path, help="keep the builds, outputs and traces in this directory")
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"), help="C compiler")
    parser.add_argument("--tolerance", type=float, default=0.0, help="relative tolerance in percent (none)")
    parser.add_argument("--abs-tolerance", type=float, default=1.0, help="absolute tolerance in ns")
    options = parser.parse_args()

    prefix = options.reference.resolve()
    if not (prefix / "bin" / "s4bximain").exists() or not (prefix / "include" / "portals4.h").exists():
        fail(f"{prefix} is not the install prefix of a built reference (bin/s4bximain, include/portals4.h)")
    if options.s4bxi is None:
        fail("give the s4bxi source tree with --s4bxi")
    root = options.s4bxi.resolve()
    build = (options.build or root / "build").resolve()
    launcher = build / "launcher" / "s4bxi-launch"
    platform = (options.platform or root / "platforms" / "quito.toml").resolve()
    sources = {"pingpong": root / "tests/integration/portals/pingpong.c",
               "timeline": root / "tests/integration/portals/timeline.c",
               "sweep": HERE / "compare_sweep.c",
               "get_after_put": root / "tests/integration/portals/get_after_put.c",
               "late_wait": HERE / "compare_late_wait.c"}
    programs = [p for p in options.programs.split(",") if p]
    for p in programs:
        if p not in sources or not sources[p].exists():
            fail(f"unknown program or missing source: {p}")
    if not launcher.exists():
        fail(f"{launcher} not found: build s4bxi first")

    work = options.work or Path(tempfile.mkdtemp(prefix="s4bxi-compare-"))
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)

    config = s4bxi_config(launcher, platform, options.set)
    platform_xml = work / "platform.xml"
    platform_xml.write_text(reference_platform_xml(config))
    e2e = config.get("nic.e2e", "true") == "true"

    (work / "glue_s4bxi.c").write_text(GLUE_COMMON)
    (work / "glue_reference.c").write_text(GLUE_REFERENCE)
    glue_reference = work / "glue_reference.o"
    run([options.cc, "-O2", "-fPIC", "-c", f"-I{prefix / 'include'}", work / "glue_reference.c", "-o", glue_reference])

    print(f"# s4bxi vs reference\n\ns4bxi: {launcher} --platform {platform} --cpu-model zero "
          f"{' '.join(set_options(options.set))}\n"
          f"reference: {prefix / 'bin' / 's4bximain'} (S4BXI_CPU_THRESHOLD=1, E2E {'on' if e2e else 'off'})\n")
    failures = 0
    for name in programs:
        ours_exe = work / f"{name}_s4bxi"
        ref_lib = work / f"lib{name}.so"
        build_s4bxi(options.cc, root, build, sources[name], work / "glue_s4bxi.c", ours_exe)
        build_reference(options.cc, root, prefix, sources[name], glue_reference, ref_lib)
        trace_ref = trace_ours = None
        if options.trace:
            trace_ref, trace_ours = work / f"trace_{name}_reference", work / f"trace_{name}_s4bxi"
            for d in (trace_ref, trace_ours):
                shutil.rmtree(d, ignore_errors=True)
                d.mkdir()
        ref_out = run_reference(prefix, work, platform_xml, ref_lib, [],
                                reference_env(config, prefix, trace_ref), e2e)
        ours_out = run_s4bxi(launcher, platform, options.set, ours_exe, [], trace_ours)
        (work / f"{name}_reference.out").write_text(ref_out)
        (work / f"{name}_s4bxi.out").write_text(ours_out)
        if name == "pingpong":
            table = Table("pingpong: one-way latency (ns)", "ns", options.tolerance, options.abs_tolerance,
                          listed_differences(name, options.set))
            compare_pingpong(table, ref_out, ours_out)
        else:
            table = Table(f"{name}: date of each step after the call (ns)", "ns", options.tolerance,
                          options.abs_tolerance, listed_differences(name, options.set))
            compare_steps(table, ref_out, ours_out)
        table.print()
        failures += table.failures
        if options.trace:
            failures += compare_traces(name, trace_ref, trace_ours, options.abs_tolerance, options.tolerance)
    print(f"\nwork directory: {work}")
    print("all values agree" if failures == 0 else f"{failures} values differ beyond the tolerance")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
