#!/usr/bin/env python3
"""Runs a group of Sandia OpenSHMEM's own tests (unmodified, built by tools/build-sos) under
s4bxi-launch, one program after the other, and prints a table of their results.

usage: run_shmem.py LAUNCHER GROUP RANKS [--cpu-model zero|measured] [--network-model M] [--full]
                    [--test-timeout S] [--only NAME[,NAME...]] [--jobs N] [--sos PREFIX]
                    [--skip REASON] [--keep DIR]

GROUP is unit or spec-example (the programs SOS's `make check` runs in that folder, in its
order); RANKS the number of ranks, one per simulated node. Up to 2 ranks, two programs
run at a time (--jobs); each runs as
`s4bxi-launch --cpu-model MODEL --timeout S -n RANKS PROGRAM` and passes when the launcher
exits 0 with every rank finished, or with status 0 after a PMI_Abort (shmem_global_exit(0)
ends the job at once: the other ranks are stopped).

A program still running after --test-timeout seconds of wall time is stopped by the
launcher's --timeout and reported TIMEOUT, with the limit. known_failures.toml (next to
this script) lists the programs expected to fail, each with its cause (a cause whose tests
hang gives them its own, shorter limit, except under --full), and the slow ones, run only
with --full (or with S4BXI_CHECK_FULL=1 in the environment: `tools/check --full`). A
listed failure that fails is XFAIL; one that passes is XPASS, an error until its entry is
removed, unless the entry says `sometimes = true` (a test that passes or not from run to
run: its result depends on how the host schedules its threads). Any FAIL, TIMEOUT or XPASS makes the exit
status 1; otherwise 0, or 77 (skipped) when SOS is not built: tools/setup records its
installation in BUILD_DIR/sos-prefix once tools/build-sos has built it (docs/openshmem.md).
--keep DIR keeps each program's run summary and output (DIR/NAME.json, DIR/NAME.out): two
runs' folders compare test by test (under --cpu-model zero they must be the same but for
wall time, pids and memory peaks).
"""
import argparse
import concurrent.futures
import json
import os
import sys
import tempfile
import threading
import time
import tomllib
from pathlib import Path

SKIP = 77
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: testkit
from testkit.launch import LaunchTimeout, launch  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402
KNOWN = HERE / "known_failures.toml"
GROUPS = ("unit", "spec-example")
DEFAULT_TIMEOUT = 120  # lfinc on 4 ranks takes 10 to 30 s of wall time on a loaded 2-core host


def check_setup(argv):
    """(launcher, SOS prefix) from a check script's `LAUNCHER [--sos PREFIX]`, or None once
    it has said why it is skipped (SOS is not built)."""
    launcher = str(Path(argv[1]).resolve())
    given = argv[argv.index("--sos") + 1] if "--sos" in argv else None
    try:
        return launcher, sos_prefix(launcher, given)
    except LookupError as why:
        print(f"skipped: {why}")
        return None


def verdict(errors, success):
    """The end of a check script: `FAIL: errors` on stderr and 1, or `ok: success` and 0."""
    if errors:
        print("FAIL:\n" + "\n".join(errors), file=sys.stderr)
        return 1
    print(f"ok: {success}")
    return 0


def run_zero(launcher, program, ranks, summary_path, cwd):
    """One run of `program` on `ranks` ranks under --cpu-model zero (120 s of wall time at
    most), its summary written to `summary_path`: the finished launcher, output captured."""
    return launch(launcher, program, ranks=ranks, timeout=120, summary=summary_path, wall_timeout=180, cwd=cwd)


def load_known(path):
    """Expected failures {group/name: (ranks or None, cause, seconds or None, sometimes, models or None,
    network models or None)} and slow tests
    {group/name: (ranks or None, why)} of known_failures.toml."""
    data = tomllib.loads(path.read_text())
    causes = data.get("causes", {})
    expected, slow = {}, {}
    for name, entry in data.get("expected", {}).items():
        cause = causes.get(entry["cause"])
        if cause is None:
            raise SystemExit(f"{path}: {name}: unknown cause '{entry['cause']}' (known: {', '.join(causes)})")
        expected[name] = (entry.get("ranks"), cause["why"], cause.get("timeout"), entry.get("sometimes", False),
                          entry.get("models"), entry.get("network_models"))
    for name, entry in data.get("slow", {}).items():
        slow[name] = (entry.get("ranks"), entry["why"])
    return expected, slow


def applies(entry, ranks, model=None, network=None):
    """Whether a known_failures.toml entry holds for this rank count (and CPU model: an
    expected failure's `models`, all of them without it; and network model: its
    `network_models`, detailed, flow or switched, all of them without it)."""
    if entry is None or (entry[0] is not None and ranks not in entry[0]):
        return False
    if network is not None and len(entry) > 5 and entry[5] is not None and network not in entry[5]:
        return False
    return model is None or entry[4] is None or model in entry[4]


def network_kind(network_model):
    """detailed, flow or switched (a schedule of dates), for known_failures.toml."""
    if not network_model:
        return "detailed"
    return "switched" if "@" in network_model else network_model


def last_lines(text, count=2):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-count:])[:240]


def run_one(launcher, program, ranks, model, timeout, env, keep=None, arguments=(), ppn=None, options=()):
    """(result, wall seconds, simulated seconds or None, note, output) of one program, given
    `arguments`, `ppn` ranks per simulated node (one without it); its summary and output are
    kept in the folder `keep` if given (NAME.json, NAME.out)."""
    with tempfile.TemporaryDirectory(prefix="s4bxi-shmem-") as work:
        summary_path = Path(work) / "summary.json"
        start = time.monotonic()
        try:
            done = launch(launcher, program, *arguments, ranks=ranks, cpu_model=model, timeout=timeout,
                          options=(["--ppn", ppn] if ppn else []) + list(options), summary=summary_path, wall_timeout=timeout + 60,
                          env=env, cwd=work)
        except LaunchTimeout:
            return ("TIMEOUT", time.monotonic() - start, None,
                    f"s4bxi-launch itself did not stop {timeout + 60} s after its own --timeout {timeout}", "")
        wall = done.wall
        try:
            summary = json.loads(summary_path.read_text())
        except (OSError, ValueError):
            summary = {}
        if keep:
            if summary:
                (keep / f"{program.name}.json").write_text(summary_path.read_text())
            (keep / f"{program.name}.out").write_text(done.stdout)
    makespan = summary.get("makespan")
    if done.returncode == 124:
        return ("TIMEOUT", wall, makespan,
                f"no end within {timeout} s of wall time: s4bxi-launch --timeout {timeout} stopped it "
                f"(exit 124; --test-timeout S changes the limit)", done.stdout)
    unfinished = [r["rank"] for r in summary.get("ranks", []) if not r.get("finished")]
    if done.returncode == 0 and summary.get("status") == "ok" and not unfinished and \
            len(summary.get("ranks", [])) == ranks:
        return ("PASS", wall, makespan, "", done.stdout)
    if done.returncode == 0 and summary.get("status") == "abort":  # shmem_global_exit(0): the job ends with 0
        return ("PASS", wall, makespan, f"ended by PMI_Abort with status 0: {summary.get('message', '')[:120]}",
                done.stdout)
    if summary.get("status") not in (None, "ok"):
        note = f"exit {done.returncode}, {summary['status']}: {summary.get('message', '').splitlines()[0][:200]}" \
            if summary.get("message") else f"exit {done.returncode}, {summary['status']}"
    elif done.returncode != 0:
        note = f"exit {done.returncode}: {last_lines(done.stderr or done.stdout)}"
    else:
        note = f"ranks {unfinished} did not finish" if unfinished else "incomplete run summary"
    return ("FAIL", wall, makespan, note, done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("launcher")
    parser.add_argument("group", choices=GROUPS)
    parser.add_argument("ranks", type=int)
    parser.add_argument("--cpu-model", default="zero", choices=("zero", "measured"))
    parser.add_argument("--network-model", help="the launcher's --network-model (docs/network-models.md)")
    parser.add_argument("--full", action="store_true", help="also run the slow tests of known_failures.toml")
    parser.add_argument("--test-timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"wall-clock seconds per program (default {DEFAULT_TIMEOUT})")
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--jobs", type=int, help="programs run at once (default: 2 up to 2 ranks, else 1)")
    parser.add_argument("--sos", help="SOS installation prefix (default: the one tools/setup recorded)")
    parser.add_argument("--skip", help="skip with this reason (exit 77)")
    parser.add_argument("--keep", type=Path,
                        help="keep each program's run summary and output in this folder (NAME.json, NAME.out), "
                             "to compare runs")
    args = parser.parse_args()
    args.launcher = str(Path(args.launcher).resolve())
    if args.skip:
        print(f"skipped: {args.skip}")
        return SKIP
    if args.ranks < 1:
        parser.error("RANKS must be at least 1")
    if args.test_timeout <= 0:
        parser.error("--test-timeout must be positive")
    if args.jobs is None:
        # More processes than cores make every Portals round trip slower (see lfinc in README.md).
        args.jobs = 2 if args.ranks <= 2 else 1
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    full = args.full or os.environ.get("S4BXI_CHECK_FULL") == "1"
    try:
        prefix = sos_prefix(args.launcher, args.sos)
    except LookupError as why:
        print(f"skipped: {why}")
        return SKIP
    listing = prefix / "tests" / args.group / "TESTS"
    programs = listing.read_text().split()
    if args.only:
        wanted = args.only.split(",")
        unknown = [name for name in wanted if name not in programs]
        if unknown:
            parser.error(f"not in {listing}: {', '.join(unknown)}")
        programs = [name for name in programs if name in wanted]
    expected, slow = load_known(KNOWN)
    # The programs get the caller's environment but none of its S4BXI_* settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("S4BXI_")}

    print(f"SOS {args.group} tests on {args.ranks} ranks, --cpu-model {args.cpu_model}, "
          f"{'--network-model ' + args.network_model[:40] + ', ' if args.network_model else ''}"
          f"{args.test_timeout:g} s each at most, {args.jobs} at a time ({prefix})", flush=True)
    progress = threading.Lock()

    def run_entry(name):
        key = f"{args.group}/{name}"
        known = expected.get(key) if applies(expected.get(key), args.ranks, args.cpu_model,
                                             network_kind(args.network_model)) else None
        if applies(slow.get(key), args.ranks) and not full and not args.only:
            row = (name, "SLOW", 0.0, None, f"not run (--full runs it): {slow[key][1]}")
        else:
            # A failure known to hang gets its cause's shorter limit: enough to pass once fixed.
            timeout = min(args.test_timeout, known[2]) if known and known[2] and not full else args.test_timeout
            result, wall, makespan, note, _ = run_one(args.launcher, prefix / "tests" / args.group / name, args.ranks,
                                                   args.cpu_model, timeout, env, args.keep,
                                                   options=["--network-model", args.network_model]
                                                   if args.network_model else [])
            if known and result == "PASS" and known[3]:
                note = f"listed as failing sometimes ({known[1]})"
            elif known and result == "PASS":
                result, note = "XPASS", f"passes, but is listed as failing ({known[1]}): remove it from {KNOWN.name}"
            elif known:
                result, note = "XFAIL", f"{known[1]} [{note}]"
            row = (name, result, wall, makespan, note)
        with progress:
            print(f"  {name:40s} {row[1]:7s} {row[2]:7.1f} s", flush=True)
        return row

    # Results do not depend on the host's load (--cpu-model zero), only wall times do.
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(run_entry, programs))

    print()
    print(f"{'test':40s} {'ranks':>5s} {'result':7s} {'wall s':>7s} {'simulated s':>12s}  note")
    for name, result, wall, makespan, note in rows:
        simulated = f"{makespan:.6f}" if makespan is not None else "-"
        print(f"{name:40s} {args.ranks:5d} {result:7s} {wall:7.1f} {simulated:>12s}  {note}")
    counts = {}
    for row in rows:
        counts[row[1]] = counts.get(row[1], 0) + 1
    print(", ".join(f"{count} {result}" for result, count in sorted(counts.items())))
    bad = [row for row in rows if row[1] in ("FAIL", "TIMEOUT", "XPASS")]
    if bad:
        print(f"FAIL: {len(bad)} unexpected: " + ", ".join(f"{row[0]} ({row[1]})" for row in bad), file=sys.stderr)
        return 1
    print(f"ok: {counts.get('PASS', 0)} passed, {counts.get('XFAIL', 0)} failed as expected "
          f"(known_failures.toml), {counts.get('SLOW', 0)} slow ones left to --full")
    return 0


if __name__ == "__main__":
    sys.exit(main())
