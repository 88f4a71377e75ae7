#!/usr/bin/env python3
"""s4bxi-plot --netpipe --config draws a ping-pong's curve beside the model's
(docs/observability.md), on the built-in platform and on a what-if platform file:

- the Portals ping-pong runs under s4bxi-launch; its one-way times, written as NetPIPE's
  rows (bytes, Mbit/s, seconds), and the effective configuration `s4bxi-launch
  --print-config` prints for the same platform go to s4bxi-plot;
- netpipe.png is drawn; netpipe.csv holds, for each size, the model's one-way time, equal
  to the formula of tests/testkit/model.py for that platform (put_to_target_event), and
  the model's Mbit/s;
- a configuration the formula does not cover (another topology) draws the measured curve
  alone and says why.

usage: check_netpipe_plot.py LAUNCHER PLOT PINGPONG PLATFORM_FILE"""
import csv
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, plot, pingpong, platform_file = sys.argv[1:5]
failures = []


def check(platform, work, name):
    options = ["--platform", platform] if platform else []
    config = subprocess.run([launcher, "--print-config", *options], capture_output=True, text=True, timeout=60)
    run = launch(launcher, pingpong, options=options, summary=work / "summary.json")
    if config.returncode != 0 or run.returncode != 0:
        failures.append(f"{name}: --print-config status {config.returncode}, ping-pong status {run.returncode}: "
                        f"{config.stderr[-400:]} {run.stderr[-400:]}")
        return
    (work / "config.txt").write_text(config.stdout)
    one_way = {int(m[1]): float(m[2]) * 1e-9 for m in re.finditer(r"size=(\d+) iterations=\d+ one_way_ns=([\d.]+)",
                                                                    run.stdout)}
    (work / "np.out").write_text("".join(f"{size} {size * 8 / t / 1e6:.6f} {t:.9e}\n"
                                         for size, t in sorted(one_way.items())))
    drawn = subprocess.run([plot, str(work / "summary.json"), "-o", str(work / "plots"), "--netpipe",
                            str(work / "np.out"), "--config", str(work / "config.txt")],
                           capture_output=True, text=True, timeout=120)
    picture, table = work / "plots" / "netpipe.png", work / "plots" / "netpipe.csv"
    if drawn.returncode != 0 or not picture.exists() or picture.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        failures.append(f"{name}: s4bxi-plot drew no netpipe.png (status {drawn.returncode}): {drawn.stderr[-800:]}")
        return
    if not table.exists():
        failures.append(f"{name}: s4bxi-plot wrote no netpipe.csv")
        return
    rows = list(csv.DictReader(table.open()))
    model = Platform(platform)
    if [int(float(r["size"])) for r in rows] != sorted(one_way) or not rows:
        failures.append(f"{name}: netpipe.csv sizes {[r['size'] for r in rows]}, the ping-pong's {sorted(one_way)}")
    for r in rows:
        size = int(float(r["size"]))
        want = model.put_to_target_event(size)
        got = float(r.get("model_one_way_s") or "nan")
        mbps = float(r.get("model_mbps") or "nan")
        if not abs(got - want) <= 1e-8 * want or not abs(mbps - size * 8 / want / 1e6) <= 1e-6 * mbps:
            failures.append(f"{name}: size {size}: model {got} s, {mbps} Mbit/s in netpipe.csv; the model gives "
                            f"{want} s, {size * 8 / want / 1e6} Mbit/s")
    print(f"{name}: {len(rows)} sizes, the model's one-way times as tests/testkit/model.py gives them")

    # A topology the formula does not cover: the measured curve alone, and why.
    (work / "other.txt").write_text(config.stdout.replace('platform.topology = "switch"', 'platform.topology = "torus"'))
    other = subprocess.run([plot, str(work / "summary.json"), "-o", str(work / "other"), "--netpipe",
                            str(work / "np.out"), "--config", str(work / "other.txt")],
                           capture_output=True, text=True, timeout=120)
    header = (work / "other" / "netpipe.csv").read_text().splitlines()[0] if other.returncode == 0 else ""
    if not (work / "other" / "netpipe.png").exists() or "model" in header or "no model curve" not in other.stderr:
        failures.append(f"{name}: with another topology, status {other.returncode}, header {header!r}, "
                        f"stderr {other.stderr[-400:]!r}: expected the measured curve alone and a note")


for platform, name in ((None, "built-in platform"), (platform_file, Path(platform_file).name)):
    with tempfile.TemporaryDirectory() as work:
        check(platform, Path(work), name)
if failures:
    sys.exit("\n".join(failures))
print("s4bxi-plot draws the ping-pong beside the model")
