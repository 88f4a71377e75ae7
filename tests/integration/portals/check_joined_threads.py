#!/usr/bin/env python3
"""Ranks whose main thread joins threads that make the Portals calls (joined_threads.c,
the pattern of SOS's threaded tests): simulated time runs through those calls' events
and to no E2E retransmission deadline. The simulation does not wait for ranks that wait
outside it; when it looked for its next event while the actors of an acknowledgement had
not started their activities yet, it took the 10 s retransmission deadline of the message
acknowledged for the next event, slept until then, and the engine ran the clock there
once the acknowledgement had removed the deadline (SOS's mt_lock_test ended at 10 or 20 s
for 0.1 s of computation).

Each rank's 4 threads make 200 fetch-adds each, one at a time: 800 round trips of a few
microseconds (an 8-byte request and its reply, tests/testkit/model.py) per thread
group, plus the threads' CPU time under the measured CPU model: far below 1 s, itself a
tenth of the retry timeout (nic.retry_timeout, 10 s). Three runs under the measured CPU
model, one under the zero model; each must add up, retransmit nothing, and end in 1 s.

usage: check_joined_threads.py LAUNCHER PROGRAM"""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
BOUND = 1.0  # simulated seconds
failures = []
with tempfile.TemporaryDirectory() as scratch:
    for run, model in enumerate(["measured", "measured", "measured", "zero"], 1):
        summary_file = Path(scratch) / f"summary{run}.json"
        done = launch(launcher, program, cpu_model=model, timeout=60, summary=summary_file)
        print(done.stdout, end="")
        if done.returncode != 0:
            failures.append(f"run {run} ({model}): exit status {done.returncode}\n{done.stderr[-2000:]}")
            continue
        summary = json.loads(summary_file.read_text())
        print(f"run {run} ({model}): makespan {summary['makespan']:.9f} s, "
              f"{summary['retransmissions']} retransmissions")
        if summary["retransmissions"] != 0 or summary["makespan"] > BOUND:
            failures.append(f"run {run} ({model}): makespan {summary['makespan']} s (at most {BOUND} s), "
                            f"{summary['retransmissions']} retransmissions (none expected)")
if failures:
    sys.exit("FAIL: " + "\n".join(failures))
print("ok: no run went to a retransmission deadline")
