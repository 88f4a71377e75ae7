#!/usr/bin/env python3
"""Runs the Portals 4 reference implementation's test suite through s4bxi-launch.

usage: run_reference_suite.py LAUNCHER SOURCE_ROOT BUILD_DIR SET [options]
  SET          basic (test/basic, one program per case) or n1 / n2 (test/sfw's ptl_test
               on test_n1's or test_n2's XML cases)
  --ranks N    ranks per case (default: 2 for basic, 1 for n1, 2 for n2)
  --part K/M   only the K-th of M equal slices of the cases (a long set split for meson)
  --only NAME  only this case (repeatable)
  --cpu-model  zero (default) or measured
  --set K=V    a key of the platform for every case (repeatable), e.g. network.model=flow
  --timeout S  wall-clock limit per case (default 60)
  --expected F the expected failures (default: expected_failures.txt next to this script)

The suite is built (or found in its cache) by tools/build-portals4-tests. Prints one line
per case (PASS, FAIL, XFAIL: failed as expected, XPASS: passed although listed) and a
score; exits 1 on a FAIL or an XPASS, 77 (skipped) when the reference source is not
available, 0 otherwise."""
import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import command, run as run_command  # noqa: E402

SKIP = 77
HERE = Path(__file__).resolve().parent
# Cases that wait on their own memory for a remote write, with no Portals call: they run
# with --memory-waits on, as a user would run them (docs/time.md "Waiting on memory").
MEMORY_WAITERS = {"test_amo_barrier"}


def parse_args():
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("launcher")
    parser.add_argument("source_root")
    parser.add_argument("build_dir")
    parser.add_argument("set", choices=["basic", "n1", "n2"])
    parser.add_argument("--ranks", type=int)
    parser.add_argument("--part")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--cpu-model", default="zero", choices=["zero", "measured"])
    parser.add_argument("--set", action="append", default=[], dest="settings")
    parser.add_argument("--timeout", type=int, default=60)
    parser.add_argument("--expected", default=str(HERE / "expected_failures.txt"))
    return parser.parse_args()


def read_expected(path, set_name, ranks, cpu_model):
    """{case: cause} for this set, rank count and CPU model. A line of the file is
    `SET RANKS CPU_MODEL CASE CAUSE...`, where RANKS and CPU_MODEL may be `*`."""
    expected = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split(None, 4)
        if len(fields) < 5:
            sys.exit(f"{path}:{number}: want SET RANKS CPU_MODEL CASE CAUSE, got: {line}")
        s, r, c, case, cause = fields
        if s == set_name and r in ("*", str(ranks)) and c in ("*", cpu_model):
            expected[case] = cause
    return expected


def build_suite(source_root, build_dir):
    """The cache directory of the built suite, or exits 77 with the reason."""
    script = Path(source_root) / "tools" / "build-portals4-tests"
    run = subprocess.run(["bash", str(script), "--build-dir", str(build_dir)], capture_output=True, text=True)
    if run.returncode == 2:
        print(run.stderr.strip())
        print("skipped: the reference implementation's source is not available")
        sys.exit(SKIP)
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        sys.exit(f"FAIL: tools/build-portals4-tests exited with {run.returncode}")
    return Path(run.stdout.strip().splitlines()[-1])


def cases_of(suite, set_name):
    """[(case name, command after the launcher's options)] in the Makefile.am's order."""
    if set_name == "basic":
        names = (suite / "basic" / "PROGRAMS").read_text().split()
        return [(name, [str(suite / "basic" / name)]) for name in names]
    folder = suite / "sfw" / ("test_" + set_name)
    names = (folder / "TESTS").read_text().split()
    return [(name, [str(suite / "sfw" / "ptl_test"), "-b", str(folder) + "/", "-f", name]) for name in names]


def races_on_real_time(program_line):
    """Whether an sfw case's threads order themselves by real-time sleeps.

    Threads other than a rank's simulated one sleep in real time (docs/time.md, "On which
    threads"), as on a real machine: `test_basic_ct-033` has one thread sleep 50 ms then
    free a counter that another thread waits on, which fails if the host has not run the
    waiter within those 50 ms. On a loaded host that happens (once in many CI runs), as it
    would on real hardware, so such a case gets a second run before it counts as failed.
    """
    if "-f" not in program_line:
        return False
    case = Path(program_line[program_line.index("-b") + 1]) / program_line[program_line.index("-f") + 1]
    text = case.read_text(errors="replace")
    return "<threads" in text and "<msleep" in text


def run_case(launcher, name, program_line, ranks, cpu_model, settings, timeout, env, workdir):
    """(passed, seconds, output tail)."""
    memory_waits = ["--memory-waits", "on"] if name in MEMORY_WAITERS else []
    line = command(launcher, *program_line, ranks=ranks, cpu_model=cpu_model, timeout=timeout, settings=settings,
                   options=memory_waits, separate=True)
    started = time.monotonic()
    try:
        run = run_command(line, wall_timeout=timeout + 30, env=env, cwd=workdir, errors="replace")
        passed, output = run.returncode == 0, run.stdout + run.stderr
        if not passed:
            output += f"\n(exit status {run.returncode})"
    except subprocess.TimeoutExpired as e:
        passed = False
        output = f"(no end after {timeout + 30} s) " + ((e.stdout or b"").decode(errors="replace") if
                                                         isinstance(e.stdout, bytes) else (e.stdout or ""))
    return passed, time.monotonic() - started, output


def main():
    a = parse_args()
    a.launcher = str(Path(a.launcher).resolve())
    ranks = a.ranks or (1 if a.set == "n1" else 2)
    suite = build_suite(a.source_root, a.build_dir)
    cases = cases_of(suite, a.set)
    if a.only:
        unknown = set(a.only) - {name for name, _ in cases}
        if unknown:
            sys.exit(f"unknown case(s): {' '.join(sorted(unknown))}")
        cases = [c for c in cases if c[0] in a.only]
    elif a.part:
        k, m = (int(x) for x in a.part.split("/"))
        if not 1 <= k <= m:
            sys.exit(f"--part {a.part}: want K/M with 1 <= K <= M")
        size = -(-len(cases) // m)
        cases = cases[(k - 1) * size:k * size]
    expected = read_expected(a.expected, a.set, ranks, a.cpu_model)

    # The launcher's own settings, not the caller's; libportals.so.4 for the programs'
    # DT_NEEDED (the launcher preloads the same library).
    env = {k: v for k, v in os.environ.items() if not k.startswith("S4BXI_")}
    libdir = str(Path(a.build_dir).resolve() / "libinterpose")
    env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")

    counts = {"PASS": 0, "FAIL": 0, "XFAIL": 0, "XPASS": 0, "reruns": 0}
    problems = []
    with tempfile.TemporaryDirectory(prefix="s4bxi-conformance-") as workdir:
        for name, program_line in cases:
            # An expected failure may be a hang: it need not use the whole wall-clock limit.
            timeout = min(a.timeout, 10) if name in expected else a.timeout
            passed, seconds, output = run_case(a.launcher, name, program_line, ranks, a.cpu_model, a.settings, timeout, env,
                                               workdir)
            rerun_note = ""
            if not passed and name not in expected and races_on_real_time(program_line):
                first_tail = output.strip().splitlines()[-1:] or [""]
                passed, more, output = run_case(a.launcher, name, program_line, ranks, a.cpu_model, a.settings, timeout,
                                                env, workdir)
                seconds += more
                counts["reruns"] += 1
                rerun_note = f"  (passed on a second run; its threads race on real time; first run: {first_tail[0]})"
            if name in expected:
                verdict = "XPASS" if passed else "XFAIL"
            else:
                verdict = "PASS" if passed else "FAIL"
            counts[verdict] += 1
            note = f"  ({expected[name]})" if name in expected else ""
            print(f"{verdict:5} {a.set} {name} [{seconds:.2f} s]{note if verdict == 'XFAIL' else ''}"
                  f"{rerun_note if verdict == 'PASS' else ''}", flush=True)
            if verdict == "FAIL":
                tail = "\n".join(output.strip().splitlines()[-12:])
                problems.append(f"{name} failed:\n    " + tail.replace("\n", "\n    "))
            elif verdict == "XPASS":
                problems.append(f"{name} passed although {Path(a.expected).name} lists it: {expected[name]}")
    total = len(cases)
    passed = counts["PASS"] + counts["XPASS"]
    print(f"score: {a.set} on {ranks} rank(s), {a.cpu_model} CPU model: {passed} of {total} passed, "
          f"{counts['XFAIL']} expected failures, {counts['FAIL']} unexpected failures, "
          f"{counts['XPASS']} unexpected passes, {counts['reruns']} second runs of cases that race on real time")
    if problems:
        print("FAIL:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
