#!/usr/bin/env python3
"""Integration cases of s4bxi-launch.

usage: launcher_cases.py LAUNCHER VERSION CASE

Each case runs the launcher in a new session with a unique marker in its environment,
checks its exit status and messages, then checks that no process of the run is left
(nothing in the launcher's session, nothing carrying the marker).
"""

import json
import os
import re
import signal
import sys
from pathlib import Path
import tempfile
import time
import uuid

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.cases import check, run_case  # noqa: E402
from testkit.launch import environment, run  # noqa: E402
from testkit.run_summary import SCHEMA, SCHEMA_PATH, key_names, schema_problems  # noqa: E402

LAUNCHER, VERSION, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
TAG_NAME = "LAUNCHER_TEST_TAG"


def leftovers(session, tag):
    """Processes of the run still alive: same session as the launcher, or carrying the tag."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            fields = stat[stat.rfind(")") + 2:].split()
            state, sid = fields[0], int(fields[3])
            if state == "Z" and int(fields[1]) == os.getpid():
                continue  # our own unreaped child (the launcher itself)
            with open(f"/proc/{pid}/environ", "rb") as f:
                environ = f.read()
        except (OSError, ValueError, IndexError):
            continue
        if sid == session or f"{TAG_NAME}={tag}".encode() in environ.split(b"\0"):
            found.append((pid, stat.split(")")[0] + ")"))
    return found


class Result:
    def __init__(self, status, stdout, stderr, wall):
        self.status, self.stdout, self.stderr, self.wall = status, stdout, stderr, wall

    def __repr__(self):
        return f"status {self.status}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}---"


def launch(args, extra_env=None, timeout=90, interrupt_after=None):
    env = environment({TAG_NAME: uuid.uuid4().hex, **(extra_env or {})})
    done = run([LAUNCHER] + args, wall_timeout=timeout, env=env, interrupt_after=interrupt_after, new_session=True)
    result = Result(done.returncode, done.stdout, done.stderr, done.wall)
    time.sleep(0.1)
    left = leftovers(done.pid, env[TAG_NAME])
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    check(not left, f"processes outlived the launcher: {left}\n{result!r}")
    return result


def expect_usage_error(args, *words, extra_env=None):
    r = launch(args, extra_env)
    check(r.status == 2, f"expected exit status 2\n{r!r}")
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    check(len(lines) == 1, f"expected exactly one error line\n{r!r}")
    check(lines[0].startswith("s4bxi-launch: error: "), f"expected 's4bxi-launch: error: ...'\n{r!r}")
    for word in words:
        check(word in lines[0], f"expected the error to mention {word!r}\n{r!r}")
    check(r.stdout == "", f"expected nothing on stdout\n{r!r}")


def expect_status(r, status):
    check(r.status == status, f"expected exit status {status}\n{r!r}")


# --- cases that need only the launcher ---------------------------------------------------

def case_bad_option():
    expect_usage_error(["--bogus", "-n", "1", "true"], "--bogus")


def case_np_zero():
    expect_usage_error(["-n", "0", "true"], "--np")


def case_bad_number():
    expect_usage_error(["--cpu-factor", "fast", "-n", "1", "true"], "--cpu-factor", "fast")


def case_missing_value():
    expect_usage_error(["-n"], "--np")


def case_no_program():
    expect_usage_error(["-n", "2"], "no program")


def case_missing_program():
    expect_usage_error(["-n", "1", "/nonexistent/s4bxi-test-program"], "/nonexistent/s4bxi-test-program",
                       "not found")


def case_not_executable():
    with tempfile.NamedTemporaryFile("w", suffix=".sh") as f:
        f.write("#!/bin/sh\nexit 0\n")
        f.flush()
        os.chmod(f.name, 0o644)
        expect_usage_error(["-n", "1", f.name], f.name, "not executable")


def case_missing_platform():
    expect_usage_error(["--platform", "/nonexistent/platform.toml", "-n", "1", "true"],
                       "/nonexistent/platform.toml")


def case_unknown_env():
    expect_usage_error(["-n", "1", "true"], "S4BXI_FOO", extra_env={"S4BXI_FOO": "1"})


def case_bad_env_value():
    expect_usage_error(["-n", "1", "true"], "S4BXI_CPU_MODEL", extra_env={"S4BXI_CPU_MODEL": "fast"})


def case_version():
    r = launch(["--version"])
    expect_status(r, 0)
    check(r.stdout == f"s4bxi-launch {VERSION}\n", f"unexpected version line\n{r!r}")


def case_help():
    r = launch(["--help"])
    expect_status(r, 0)
    for word in ("Usage:", "--np", "-np", "--ppn", "--npernode", "--platform", "--cpu-model", "--timeout",
                 "--summary"):
        check(word in r.stdout, f"help does not mention {word}\n{r!r}")
    wide = [line for line in r.stdout.splitlines() if len(line) > 80]
    check(not wide, f"help lines wider than 80 columns: {wide}")


def summary_of(arguments):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        r = launch(["-q", "--summary", path, *arguments])
        expect_status(r, 0)
        with open(path) as f:
            return json.load(f)


def case_mpirun_spellings():
    # mpirun's ways of giving the rank count and the ranks per node; the program's own
    # "-np" stays its own.
    for arguments, ranks, ppn in ((["-np", "3"], 3, 1), (["-c", "2"], 2, 1), (["--np", "4", "-N", "2"], 4, 2),
                                  (["-np", "4", "--npernode", "4"], 4, 4)):
        s = summary_of([*arguments, "sh", "-c", 'test "$1" = -np', "sh", "-np"])
        check(s["world_size"] == ranks, f"{arguments}: {s['world_size']} ranks, expected {ranks}")
        nodes = {r["node"] for r in s["ranks"]}
        check(len(nodes) == -(-ranks // ppn), f"{arguments}: ranks on {sorted(nodes)}, expected {ppn} per node")


def case_default_platform_fits_job():
    # The built-in platform has as many nodes as the job needs; a platform file that is too
    # small is still an error.
    s = summary_of(["-np", "40", "true"])
    check(s["world_size"] == 40 and s["platform"]["nodes"] == 40,
          f"40 ranks on {s['platform']['nodes']} nodes: {s['platform']}")
    check(s["platform"]["nodes_from"].startswith("sized by the job"), f"{s['platform']}")
    s = summary_of(["-n", "6", "--ppn", "4", "true"])
    check(s["platform"]["nodes"] == 2, f"6 ranks at 4 per node on {s['platform']['nodes']} nodes")
    s = summary_of(["-n", "2", "--set", "platform.nodes=5", "true"])
    check(s["platform"]["nodes"] == 5, f"platform.nodes=5 given, {s['platform']['nodes']} nodes built")
    r = launch(["-q", "-n", "20", "--set", "platform.nodes=16", "true"])
    expect_status(r, 13)
    check("need 20 nodes" in r.stderr and "has 16" in r.stderr, f"no clear error for a platform too small\n{r!r}")


# --- cases that need the simulation server and the library -------------------------------

def case_true():
    r = launch(["-q", "-n", "1", "true"])
    expect_status(r, 0)


def case_three_ranks():
    r = launch(["-q", "-n", "3", "--ppn", "2", "true"])
    expect_status(r, 0)


def case_exit_status():
    r = launch(["-q", "-n", "1", "sh", "-c", "exit 3"])
    expect_status(r, 3)


def case_rank_segv():
    r = launch(["-q", "-n", "2", "bash", "-c", 'if [ "$S4BXI_RANK" = 1 ]; then kill -SEGV $$; fi; exit 0'])
    expect_status(r, 128 + signal.SIGSEGV)
    check(re.search(r"rank 1 \(pid \d+\) killed by SIGSEGV", r.stderr), f"no crash report\n{r!r}")


def case_summary_file():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        r = launch(["--summary", path, "-n", "2", "true"])
        expect_status(r, 0)
        check("simulated makespan" in r.stderr, f"no human summary on stderr\n{r!r}")
        with open(path) as f:
            s = json.load(f)
        check(s.get("status") == "ok", f"summary status {s.get('status')}")
        check(s.get("exit_status") == 0, "summary exit_status")
        check(s.get("wall_time", 0) > 0, "summary wall_time")
        check(s.get("world_size") == 2 and len(s.get("ranks", [])) == 2, "summary ranks")


def summary_written(arguments, status):
    """The summary file of a run expected to end with `status`."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        r = launch(["-q", "--summary", path, *arguments])
        expect_status(r, status)
        with open(path) as f:
            return json.load(f)


def case_summary_schema():
    # The C++ spells the summary's keys from the build's s4bxi/summary_keys.hpp, generated
    # from the schema: it names the schema's keys and version, no other.
    header = Path(LAUNCHER).resolve().parent.parent / "include" / "s4bxi" / "summary_keys.hpp"
    text = header.read_text()
    check(set(re.findall(r'constexpr const char\* (\w+) = "\1";', text)) == key_names(),
          f"{header} and {SCHEMA_PATH} name other keys")
    check(f"kVersion = {SCHEMA['version']};" in text, f"{header} has another version than {SCHEMA_PATH}")
    # Summaries of runs that end in each way follow the schema: ok, under the measured CPU
    # model (the MPI library's costs), a rank's exit status, a crash.
    runs = [(["--cpu-model", "zero", "-n", "2", "true"], 0),
            (["--cpu-model", "measured", "-n", "2", "true"], 0),
            (["-n", "1", "sh", "-c", "exit 3"], 3),
            (["-n", "2", "bash", "-c", 'if [ "$S4BXI_RANK" = 1 ]; then kill -SEGV $$; fi; exit 0'],
             128 + signal.SIGSEGV)]
    for arguments, status in runs:
        summary = summary_written(arguments, status)
        check(summary.get("version") == SCHEMA["version"], f"summary version {summary.get('version')}")
        problems = schema_problems(summary)
        check(not problems, f"{' '.join(arguments)}: the summary does not follow {SCHEMA_PATH.name}:\n  "
              + "\n  ".join(problems))
    check("mpi_costs" in summary_written(runs[1][0], 0), "no mpi_costs under the measured CPU model")


def case_virtual_sleep():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "run.json")
        r = launch(["-q", "--summary", path, "-n", "1", "python3", "-c", "import time; time.sleep(5)"])
        expect_status(r, 0)
        with open(path) as f:
            s = json.load(f)
        check(s["makespan"] >= 5.0, f"makespan {s['makespan']} < 5 s")
        check(s["wall_time"] < 4.5, f"a simulated 5 s sleep took {s['wall_time']} s of wall time")


def case_timeout():
    r = launch(["-q", "--timeout", "2", "-n", "1", "sh", "-c", "while :; do :; done"])
    expect_status(r, 124)
    check("wall-clock timeout of 2 s exceeded" in r.stderr, f"no timeout message\n{r!r}")


def case_interrupt():
    r = launch(["-q", "-n", "2", "sh", "-c", "while :; do :; done"], interrupt_after=3)
    expect_status(r, 128 + signal.SIGINT)


def case_orphans():
    # Children of a rank that outlive it (one even in its own session) are killed at the end.
    r = launch(["-q", "-n", "1", "bash", "-c", "(sleep 300 &); (setsid sleep 301 &); exit 0"])
    expect_status(r, 0)


def case_command_mode():
    # Command mode: the rank identifies itself from its environment, the world size is
    # learned from it.
    r = launch(["-q", "--", "sh", "-c", 'S4BXI_RANK=0 S4BXI_SIZE=1 exec sh -c "exit 5"'])
    expect_status(r, 5)



def case_stopped_after_failure():
    # A process manager stops the other ranks when one exits with a failure: the report
    # names the rank that failed, not only the one that was stopped.
    script = ('S4BXI_RANK=1 S4BXI_SIZE=2 sh -c "while :; do :; done" & other=$!; '
              'S4BXI_RANK=0 S4BXI_SIZE=2 sh -c "sleep 0.01; exit 1"; '
              'kill $other; wait $other; exit 1')
    r = launch(["--", "sh", "-c", script])
    expect_status(r, 1)
    check(re.search(r"rank 1 \(pid \d+, node1\) was stopped before finishing at simulated time [0-9.]+ s, after rank 0 "
                    r"exited with status 1", r.stderr), f"the report does not name the rank that failed\n{r!r}")


def case_command_fails_early():
    # A command that fails before any rank registers (mpirun refusing to start, a typo in a
    # wrapper script) ends the run at once, with its status and a summary that says so.
    r = launch(["--", "sh", "-c", "exit 7"])
    expect_status(r, 7)
    check(r.wall < 5, f"the launcher waited {r.wall:.1f} s after the command had failed\n{r!r}")
    check("stopped before any rank registered" in r.stderr, f"the summary does not say why\n{r!r}")


def case_print_config_openmpi():
    # Open MPI's environment is part of the effective configuration; user settings win.
    r = launch(["--print-config"], extra_env={"OMPI_MCA_pml": "ob1"})
    expect_status(r, 0)
    check("# Open MPI environment given to the command" in r.stdout, f"no Open MPI section\n{r!r}")
    check(re.search(r"^#   OMPI_MCA_pml=ob1  \(from the environment\)$", r.stdout, re.M),
          f"the user's OMPI_MCA_pml is not shown as theirs\n{r!r}")
    if os.geteuid() == 0:
        check("#   OMPI_ALLOW_RUN_AS_ROOT=1" in r.stdout, f"running as root, mpirun needs OMPI_ALLOW_RUN_AS_ROOT\n{r!r}")


if __name__ == "__main__":
    sys.exit(run_case(globals(), CASE))
