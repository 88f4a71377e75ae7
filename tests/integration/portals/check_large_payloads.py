#!/usr/bin/env python3
"""Large payloads arrive intact whichever way they move (large_payloads.c), and a rank that
dies while its delivery thread copies a payload into it ends the run with a clear error.

Under the zero CPU model the run summary's `payloads_copied_once` counts the payloads the
ranks' delivery threads copied (the three large Puts and the Get), `payload_copy_fallbacks`
the orders they could not carry out (the Put into read-only memory, copied then through
the server, which fails the same way: its ACK says PTL_NI_SEGV); the Put into an I/O vector
never makes an order. A third run with platform.copy_once_from = 0 copies every payload
through the server. The three give the same simulated times.

In the second case, rank 1 kills itself when the first byte of a 64 MiB Put lands: the run
must stop with the rank's death reported, well within its timeout, and leave no process of
the run behind."""
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]


def run(summary, *arguments, copy_once_from=None):
    env = dict(os.environ)
    if copy_once_from is not None:
        env["S4BXI_COPY_ONCE_FROM"] = str(copy_once_from)
    done = launch(launcher, program, *arguments, timeout=120, summary=summary, wall_timeout=180, env=env)
    return done, done.wall, json.loads(summary.read_text()) if summary.exists() else None


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead; only its parent has not reaped it yet.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


problems = []
with tempfile.TemporaryDirectory() as work:
    runs = [run(Path(work) / f"intact{n}.json") for n in (1, 2)]
    runs.append(run(Path(work) / "through_server.json", copy_once_from=0))
    for done, _, summary in runs:
        if done.returncode != 0 or summary is None:
            sys.exit(f"large_payloads failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    summary = runs[0][2]
    if summary["payloads_copied_once"] != 4:
        problems.append(f"{summary['payloads_copied_once']} payloads copied once, expected 4 (3 Puts and a Get)")
    if summary["payload_copy_fallbacks"] != 1:
        problems.append(f"{summary['payload_copy_fallbacks']} failed copy orders, expected 1 (the read-only entry)")
    if runs[2][2]["payloads_copied_once"] != 0 or runs[2][2]["payload_copy_fallbacks"] != 0:
        problems.append("with platform.copy_once_from = 0, payloads were still ordered to the delivery threads")
    ends = [[rank["end_time"] for rank in done[2]["ranks"]] for done in runs]
    if ends[1] != ends[0] or ends[2] != ends[0]:
        problems.append(f"the ranks ended at {ends[0]}, {ends[1]} and, every payload through the server, "
                        f"{ends[2]} s: the way bytes move changed simulated time")

    done, wall, summary = run(Path(work) / "dies.json", "target_dies")
    report = done.stdout + done.stderr
    if done.returncode == 0:
        problems.append(f"a run whose rank was killed exited with 0:\n{report}")
    if wall > 60:
        problems.append(f"the run whose rank died took {wall:.0f} s to stop")
    if "rank 1" not in report or "SIGKILL" not in report and "signal 9" not in report and "killed" not in report:
        problems.append(f"the report does not say that rank 1 was killed:\n{report}")
    if summary is None or summary["status"] != "rank-crash":
        problems.append(f"summary status {summary and summary['status']}, expected rank-crash")
    for rank in summary["ranks"] if summary else []:
        if alive(rank["pid"]):
            problems.append(f"rank {rank['rank']} (pid {rank['pid']}) is still alive after the run")

if problems:
    sys.exit("\n".join(problems))
print("large payloads arrive intact, copied once or through the server; a rank killed mid-copy ends the run")
