#!/usr/bin/env python3
"""Ranks spinning on their memory in a ring (spin_ring.c) under the measured CPU model, more
ranks than the host has cores: each round is one 8-byte put, its latency (under 5 us on
the built-in platform, tests/testkit/model.py), plus the CPU time the ranks spin for
it. The server stops a rank that runs more than 1 ms of simulated time ahead of the
slowest one (simkernel/scheduling/rank_throttle.hpp), and reads CPU time one scheduler
tick late at most (10 ms at 100 Hz): a round costs under 20 ms whatever the host's load.
Before, the spinning of ranks that ran ahead while the others waited for a core was their
simulated time: SOS's c11_shmem_test_all_any_some took about 250 ms per round on 8 ranks
of a 2-core host at a load of 10; this ring, 6 to 19 ms per round on 12 ranks (2.5 to 6.3
with the throttle) on the same host at a load of 3.

usage: check_spin_ring.py LAUNCHER PROGRAM [RANKS [ROUNDS]]"""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
ranks = sys.argv[3] if len(sys.argv) > 3 else "8"
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 20
THROTTLE_AHEAD = 1e-3
CLOCK_LAG = 10e-3
round_bound = Platform().network(8) * 4 + 2 * THROTTLE_AHEAD + CLOCK_LAG  # a generous put latency
done = launch(launcher, program, rounds, ranks=ranks, cpu_model="measured", timeout=120, wall_timeout=180)
print(done.stdout, end="")
if done.returncode != 0:
    sys.exit(f"FAIL: exit status {done.returncode}\n{done.stderr[-2000:]}")
loops = [int(m) for m in re.findall(r"loop_ns=(\d+)", done.stdout)]
if len(loops) != int(ranks):
    sys.exit(f"FAIL: {len(loops)} ranks reported, expected {ranks}")
longest = max(loops) * 1e-9
print(f"longest loop {longest * 1e3:.3f} ms for {rounds} rounds, bound {rounds * round_bound * 1e3:.3f} ms")
if longest > rounds * round_bound:
    sys.exit("FAIL: the ranks' spinning became simulated time")
print("ok")
