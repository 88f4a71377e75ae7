#!/usr/bin/env python3
"""Memory does not grow with the run: a ping-pong five times longer than another keeps the
server's and each rank's peak resident set within a quarter of the shorter run's (plus a
few MiB of allocator slack), and a 1 MiB ping-pong keeps the server under 300 MB.

Before the model released delivered messages, the server kept every payload and about
600 bytes per message: 1000 round trips of 1 MiB took it past 2 GB, and 100 000 of 8 B
added about 60 MB to its peak.

Usage: check_endurance.py LAUNCHER MESSAGE_RATE BYTES SHORT_ROUNDS LONG_ROUNDS"""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
size, short_rounds, long_rounds = (int(x) for x in sys.argv[3:6])
SLACK = 8 * 2**20
SERVER_LIMIT = 300 * 10**6


def peaks(rounds):
    with tempfile.TemporaryDirectory() as work:
        summary = Path(work) / "summary.json"
        done = launch(launcher, program, rounds, size, summary=summary, wall_timeout=600)
        if done.returncode != 0:
            sys.exit(f"{rounds} round trips of {size} B failed ({done.returncode}):\n{done.stderr}")
        data = json.loads(summary.read_text())
    ranks = [r["peak_rss"] for r in data["ranks"]]
    if not all(ranks) or not data["server_peak_rss"]:
        sys.exit(f"the summary does not report the peak resident sets: {data}")
    return data["server_peak_rss"], max(ranks)


(server_short, rank_short), (server_long, rank_long) = peaks(short_rounds), peaks(long_rounds)
print(f"{size} B: server peak {server_short / 2**20:.1f} MiB after {short_rounds} round trips, "
      f"{server_long / 2**20:.1f} MiB after {long_rounds}; largest rank {rank_short / 2**20:.1f} -> "
      f"{rank_long / 2**20:.1f} MiB")
problems = []
if server_long > server_short * 1.25 + SLACK:
    problems.append("the server's peak grows with the run")
if rank_long > rank_short * 1.25 + SLACK:
    problems.append("a rank's peak grows with the run")
if server_long > SERVER_LIMIT:
    problems.append(f"the server's peak is over {SERVER_LIMIT / 1e6:.0f} MB")
if problems:
    sys.exit("; ".join(problems))
