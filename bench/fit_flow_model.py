#!/usr/bin/env python3
"""Fits the flow model's factors (flow.latency, flow.bandwidth_factor) to the detailed
model on a platform, as SMPI's network factors are fitted to measurements
(docs/model.md, "The flow model").

usage: bench/fit_flow_model.py [BUILD_DIR] [--platform FILE] [--write FILE] [--quick]

The Portals ping-pong (bench/message_rate) runs under --cpu-model zero on 2 nodes over a
sweep of sizes, once under the detailed model and once under the flow model with no
latency of its own and the links' whole bandwidth (flow.latency = 0,
flow.bandwidth_factor = 1; flow.command_time and flow.rx_time as the platform gives
them). From the one-way times:

  flow.latency          = the mean, over the small sizes (up to 512 B), of detailed - flow
  flow.bandwidth_factor = (flow(L2) - flow(L1)) / (detailed(L2) - detailed(L1)), the two
                          largest sizes: the share of the links the detailed model's
                          payloads get, PCIe and packet waits included

The sweep is a Portals benchmark: the OSU sizes the flow model is judged on are not used.
Prints the sweep, the factors and the flow model's error per size with them; --write FILE
sets them in FILE's [flow] table (a platform file; created if absent), keeping the rest of
the file. Exit status 1 when a run fails.
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # tests/: testkit
from testkit.launch import command, environment, run  # noqa: E402

SIZES = [8, 64, 512, 4096, 32768, 262144, 1048576]
SMALL = 512
LOOP = re.compile(r"loop ([0-9.eE+-]+) s")


def one_way(launcher, program, size, rounds, platform, settings):
    options = ("--platform", str(platform)) if platform else ()
    line = command(launcher, program, rounds, size, ranks=2, settings=settings, options=options, timeout=600)
    done = run(line, wall_timeout=900, env=environment())
    found = LOOP.search(done.stdout)
    if done.returncode != 0 or not found:
        sys.exit(f"fit_flow_model: {' '.join(map(str, line))} failed ({done.returncode}):\n{done.stdout[-1000:]}"
                 f"{done.stderr[-2000:]}")
    return float(found.group(1)) / (2 * rounds)


def rounds_for(size, quick):
    rounds = 200 if size <= 4096 else 50 if size <= 262144 else 20
    return max(4, rounds // 10) if quick else rounds


def fit(detailed, flow):
    small = [s for s in SIZES if s <= SMALL]
    latency = max(0.0, sum(detailed[s] - flow[s] for s in small) / len(small))
    l1, l2 = SIZES[-2], SIZES[-1]
    factor = (flow[l2] - flow[l1]) / (detailed[l2] - detailed[l1])
    return latency, min(1.0, max(1e-3, factor))


def write_flow_table(path, values):
    """Sets the keys of `values` in the [flow] table of the TOML file at `path`."""
    text = path.read_text() if path.exists() else ""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "[flow]"), None)
    if start is None:
        lines += ([""] if lines else []) + ["[flow]"]
        start = len(lines) - 1
    end = next((i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")), len(lines))
    for key, value in values.items():
        entry = f"{key} = {value:.6g}  # fitted by bench/fit_flow_model.py"
        at = next((i for i in range(start + 1, end) if re.match(rf"\s*{key}\s*=", lines[i])), None)
        if at is None:
            lines.insert(end, entry)
            end += 1
        else:
            lines[at] = entry
    path.write_text("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=str(ROOT / "build"))
    parser.add_argument("--platform", type=Path, help="the platform file to fit (default: the built-in one)")
    parser.add_argument("--write", type=Path, help="set the fitted factors in this platform file's [flow] table")
    parser.add_argument("--quick", action="store_true", help="a tenth of the round trips: a smoke test")
    a = parser.parse_args()
    build = Path(a.build)
    launcher, program = build / "launcher" / "s4bxi-launch", build / "bench" / "message_rate"
    nodes = ["platform.nodes=2"] if not a.platform else []
    bare_flow = nodes + ["network.model=flow", "flow.latency=0", "flow.bandwidth_factor=1"]
    detailed, flow = {}, {}
    for size in SIZES:
        rounds = rounds_for(size, a.quick)
        detailed[size] = one_way(launcher, program, size, rounds, a.platform, nodes + ["network.model=detailed"])
        flow[size] = one_way(launcher, program, size, rounds, a.platform, bare_flow)
    latency, factor = fit(detailed, flow)
    fitted = nodes + ["network.model=flow", f"flow.latency={latency!r}", f"flow.bandwidth_factor={factor!r}"]
    print(f"{'size B':>9}  {'detailed us':>11}  {'bare flow us':>12}  {'fitted flow us':>14}  {'error':>7}")
    worst = 0.0
    for size in SIZES:
        with_fit = one_way(launcher, program, size, rounds_for(size, a.quick), a.platform, fitted)
        error = (with_fit - detailed[size]) / detailed[size]
        worst = max(worst, abs(error))
        print(f"{size:>9}  {detailed[size] * 1e6:>11.3f}  {flow[size] * 1e6:>12.3f}  {with_fit * 1e6:>14.3f}  "
              f"{error:>+7.1%}")
    print(f"flow.latency = {latency:.6g}\nflow.bandwidth_factor = {factor:.6g}\nlargest error on the sweep: {worst:.1%}")
    if a.write:
        write_flow_table(a.write, {"latency": latency, "bandwidth_factor": factor})
        print(f"written into {a.write}'s [flow] table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
