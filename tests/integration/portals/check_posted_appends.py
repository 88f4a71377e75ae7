#!/usr/bin/env python3
"""List appends posted without waiting (posted_appends.c, which checks what the program
sees: limits, handles the server knows, each entry consumed once). Here, from the run
summary and the server's messages: under --cpu-model zero, rank 0 posts most of its
appends (all of them but those that must wait: past a limit, on a non-matching NI with an
ME, after PtlPTFree, or when the entries it may not know freed yet leave no room); no
posted call fails in the server, which would mean the rank and the server disagree on an
entry's handle; two runs give the same summary and the same output. Under the measured
CPU model nothing is posted, and the program sees the same."""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
MESSAGES, LIST = 200, 6  # as in posted_appends.c
# Rank 0 appends 2 * LIST entries then 2 * LIST again while its list fills and empties,
# MESSAGES + 1 while rank 1 streams, 2 LEs: at least the stream's appends are posted but
# for those that find no room it may count on.
MOST_APPENDS = MESSAGES // 2


def run(summary, model):
    done = launch(launcher, program, cpu_model=model, timeout=60, summary=summary)
    if done.returncode != 0:
        sys.exit(f"failed under the {model} CPU model ({done.returncode}):\n{done.stdout}{done.stderr}")
    for warning in ("internal error", "a posted"):
        if warning in done.stderr:
            sys.exit(f"the server says '{warning}' under the {model} CPU model:\n{done.stderr}")
    return json.loads(summary.read_text()), sorted(done.stdout.splitlines())


def simulated(summary):
    """What two runs under the zero CPU model must agree on: dates and counts."""
    fields = ("end_time", "portals_time", "portals_ops", "portals_local_ops", "portals_posted", "messages_sent")
    return summary["makespan"], [tuple(rank.get(field) for field in fields) for rank in summary["ranks"]]


with tempfile.TemporaryDirectory() as work:
    (first, first_out), (second, second_out) = run(Path(work) / "a.json", "zero"), run(Path(work) / "b.json", "zero")
    measured, _ = run(Path(work) / "c.json", "measured")
problems = []
posted = {r["rank"]: r.get("portals_posted", 0) for r in first["ranks"]}
print(f"zero CPU model: {posted[0]} calls posted by rank 0, {posted[1]} by rank 1 (its puts)")
if posted[0] < MOST_APPENDS:
    problems.append(f"rank 0 posted {posted[0]} calls, expected at least {MOST_APPENDS}")
if posted[1] < MESSAGES:
    problems.append(f"rank 1 posted {posted[1]} puts, expected at least {MESSAGES}")
if simulated(first) != simulated(second) or first_out != second_out:
    problems.append("two runs under --cpu-model zero gave different summaries or output")
measured_posted = sum(r.get("portals_posted", 0) for r in measured["ranks"])
print(f"measured CPU model: {measured_posted} calls posted")
if measured_posted != 0:
    problems.append(f"{measured_posted} calls posted under the measured CPU model")
if problems:
    sys.exit("; ".join(problems))
