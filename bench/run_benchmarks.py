#!/usr/bin/env python3
"""Speed of the simulator itself: wall time per simulated message for a small-message
Portals ping-pong, and per request for a rank that only sleeps, with the server's peak
memory. Prints figures; asserts nothing. Usage: bench/run_benchmarks.py [BUILD_DIR]."""
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit.launch import launch  # noqa: E402

build = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
launcher = build / "launcher" / "s4bxi-launch"


def run(ranks, model, program, *arguments):
    with tempfile.NamedTemporaryFile(suffix=".json") as summary:
        done = launch(launcher, program, *arguments, ranks=ranks, cpu_model=model, summary=summary.name,
                      wall_timeout=None)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"{done.args}: status {done.returncode}\n{done.stderr}")
        return done.wall, json.load(open(summary.name)), after.ru_maxrss


rate = build / "bench" / "message_rate"
print(f"{'benchmark':44s} {'wall s':>8s} {'simulated s':>12s} {'messages':>9s} {'µs wall/msg':>12s}")
for rounds in (1000, 10000, 50000):
    for model in ("zero", "measured"):
        wall, summary, rss = run(2, model, rate, rounds)
        messages = sum(r["messages_sent"] for r in summary["ranks"])
        print(f"{f'8-byte ping-pong, {rounds} rounds, cpu {model}':44s} {wall:8.3f} {summary['makespan']:12.6f} "
              f"{messages:9d} {wall / messages * 1e6:12.2f}")
wall, summary, rss = run(16, "zero", "python3", "-c", "import time\nfor _ in range(200): time.sleep(0.01)")
print(f"{'16 ranks x 200 sleeps of 10 ms (python)':44s} {wall:8.3f} {summary['makespan']:12.6f} {'-':>9s} "
      f"{wall / (16 * 200) * 1e6:12.2f}")
print(f"largest child resident set seen: {rss / 1024:.1f} MiB")
