#!/usr/bin/env python3
"""PTL_PID_ANY gives every process of a node its own pid, even when the ranks of a node
initialise their NIs at the same instant (8 ranks, 4 per node, --cpu-model zero: every
PtlNIInit of a node is in the same batch)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
done = launch(launcher, program, ranks=8, options=("--ppn", 4))
if done.returncode != 0:
    sys.exit(f"run failed ({done.returncode}): {done.stderr}")
ids = re.findall(r"pid_any rank=(\d+) nid=(\d+) pid=(\d+)", done.stdout)
if len(ids) != 8:
    sys.exit(f"expected 8 identities:\n{done.stdout}")
for rank, nid, pid in ids:
    if int(nid) != int(rank) // 4:
        sys.exit(f"rank {rank} is on nid {nid}, expected {int(rank) // 4}:\n{done.stdout}")
pairs = [(nid, pid) for _, nid, pid in ids]
if len(set(pairs)) != len(pairs):
    sys.exit(f"two processes share a (nid, pid):\n{done.stdout}")
print("every process has its own (nid, pid)")
