#!/usr/bin/env python3
"""Events and counters read from the mirror make no round trip (mirror_reads.c): the run
summary counts, per rank, the Portals calls answered in the rank's own process. Rank 1
polls an idle queue while events wait elsewhere (answered at once, then a round trip),
reads its counter three times (PtlCTGet, PtlCTWait, PtlCTPoll), 20 events of its counted
queue and the 4 kept by its small queue, then finds both queues empty: at once right after
an event, then with a round trip. Under the measured CPU model, with rank 1 computing while
the puts arrive (written after its last reply), it reads them from the mirror too, but
for PtlCTGet: the server is behind the rank's clock, a value could still change.
Rank 0 reads 20 SEND, 20 ACK and 6 SEND events. Two runs under --cpu-model zero give the
same summary."""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import run_summary  # noqa: E402
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
EXPECTED_LOCAL = {0: 20 + 20 + 6, 1: 1 + 3 + 20 + 4 + 1}


def run(summary, cpu_model="zero", arguments=(), timeout=None):
    done = launch(launcher, program, *arguments, cpu_model=cpu_model, timeout=timeout, summary=summary,
                  wall_timeout=60)
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return run_summary.simulated_part(json.loads(summary.read_text()))


with tempfile.TemporaryDirectory() as work:
    first, second = run(Path(work) / "a.json"), run(Path(work) / "b.json")
    computing = run(Path(work) / "c.json", "measured", ["compute"], timeout=60)
problems = []
for rank in first["ranks"]:
    got, expected = rank.get("portals_local_ops"), EXPECTED_LOCAL[rank["rank"]]
    print(f"rank {rank['rank']}: {got} calls answered from the mirror (expected {expected}), "
          f"{rank['portals_ops']} Portals operations in all")
    if got != expected:
        problems.append(f"rank {rank['rank']}: {got} local reads, expected {expected}")
# Computing instead of sleeping (measured CPU model), rank 1 reads what arrived meanwhile
# from the mirror all the same: its counter's wait and poll, 24 events, the free empty
# poll. Its PtlCTGet asks the server, which answers with every put counted.
local = {r["rank"]: r.get("portals_local_ops") for r in computing["ranks"]}
print(f"measured CPU model, rank 1 computing while the puts arrive: {local[1]} calls answered from the mirror "
      f"(expected {2 + 20 + 4 + 1})")
if local[1] != 2 + 20 + 4 + 1:
    problems.append(f"computing rank 1: {local[1]} local reads, expected {2 + 20 + 4 + 1}")
if first != second:
    problems.append("two runs under --cpu-model zero gave different summaries: "
                    + "; ".join(run_summary.differences(first, second)))
if problems:
    sys.exit("; ".join(problems))
