#!/usr/bin/env python3
"""Fits the flow model's factors (flow.gap, flow.answer_gap, flow.send_gap, flow.byte_gap,
flow.small_latency, flow.latency, flow.bandwidth_factor) to the
detailed model on a platform, as SMPI's network factors are fitted to measurements
(docs/network-models.md, "The flow model").

usage: bench/fit_flow_model.py [BUILD_DIR] [--platform FILE] [--write FILE] [--quick]

Under --cpu-model zero, on 2 nodes, Portals benchmarks run under the detailed model and
under the flow model:

  flow.gap              a stream of 8-byte puts without ACKs (bench/put_stream), windows
                        of 64 against windows of 1: the detailed model's time per
                        message of a busy receiving NIC
  flow.answer_gap       the same stream with ACKs: the time per message of a NIC that
                        answers each one
  flow.byte_gap         streams of 16 KiB and of 64 KiB puts without ACKs: the difference
                        of their times per message over the difference of their sizes
  flow.send_gap         the 16 KiB stream's time per message, less 16 KiB of byte_gap
  flow.small_latency    a ping-pong (bench/message_rate) over a sweep of sizes, the flow
                        model with no latency of its own and the links' whole bandwidth:
                        the mean, over the sizes up to flow.small_size, of detailed - flow
  flow.latency          the same, over the sizes above flow.small_size up to 512 B
  flow.bandwidth_factor the same sweep: (flow(L2) - flow(L1)) / (detailed(L2) -
                        detailed(L1)) over the two largest sizes, the share of the links
                        the detailed model's payloads get, PCIe and packet waits included

flow.command_time and flow.small_size are the platform's. These are Portals benchmarks: the OSU sizes the flow
model is judged on (bench/flow_accuracy.py) are not used. Prints the measurements, the
factors and the flow model's error with them; --write FILE sets them in FILE's [flow]
table (a platform file; created if absent), keeping the rest of the file. Exit status 1
when a run fails.
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
WINDOW = 64
STREAM_SIZES = (16384, 65536)  # payloads of the streams that fit flow.send_gap and flow.byte_gap


def loop_time(launcher, program, arguments, platform, settings):
    options = ("--platform", str(platform)) if platform else ()
    line = command(launcher, program, *arguments, ranks=2, settings=settings, options=options, timeout=600)
    done = run(line, wall_timeout=900, env=environment())
    found = LOOP.search(done.stdout)
    if done.returncode != 0 or not found:
        sys.exit(f"fit_flow_model: {' '.join(map(str, line))} failed ({done.returncode}):\n{done.stdout[-1000:]}"
                 f"{done.stderr[-2000:]}")
    return float(found.group(1))


def one_way(launcher, build, size, rounds, platform, settings):
    return loop_time(launcher, build / "bench" / "message_rate", [rounds, size], platform, settings) / (2 * rounds)


def stream_gap(launcher, build, rounds, platform, settings, acks, size=8):
    """A busy NIC's time per message: windows of WINDOW puts against windows of 1."""
    program = build / "bench" / "put_stream"
    mode = "ack" if acks else "noack"
    full = loop_time(launcher, program, [rounds, WINDOW, size, mode], platform, settings)
    single = loop_time(launcher, program, [rounds, 1, size, mode], platform, settings)
    return max(0.0, (full - single) / ((WINDOW - 1) * rounds))


def rounds_for(size, quick):
    rounds = 200 if size <= 4096 else 50 if size <= 262144 else 20
    return max(4, rounds // 10) if quick else rounds


def mean_difference(detailed, flow, sizes):
    return max(0.0, sum(detailed[s] - flow[s] for s in sizes) / len(sizes)) if sizes else 0.0


def fit(detailed, flow, small_size):
    """(small_latency, latency, bandwidth_factor)."""
    small_latency = mean_difference(detailed, flow, [s for s in SIZES if s <= small_size])
    latency = mean_difference(detailed, flow, [s for s in SIZES if small_size < s <= SMALL])
    l1, l2 = SIZES[-2], SIZES[-1]
    factor = (flow[l2] - flow[l1]) / (detailed[l2] - detailed[l1])
    return small_latency or latency, latency, min(1.0, max(1e-3, factor))


def small_size_of(launcher, platform):
    """The platform's flow.small_size, as --print-config shows it."""
    line = [str(launcher), "--print-config"] + (["--platform", str(platform)] if platform else [])
    found = re.search(r"^flow\.small_size = (\d+)", run(line, env=environment()).stdout, re.M)
    if not found:
        sys.exit("fit_flow_model: --print-config shows no flow.small_size")
    return int(found.group(1))


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
    launcher = build / "launcher" / "s4bxi-launch"
    nodes = ["platform.nodes=2"] if not a.platform else []
    stream_rounds = 4 if a.quick else 40
    detailed_model = nodes + ["network.model=detailed"]
    gap = stream_gap(launcher, build, stream_rounds, a.platform, detailed_model, acks=False)
    answer_gap = stream_gap(launcher, build, stream_rounds, a.platform, detailed_model, acks=True)
    medium = stream_gap(launcher, build, stream_rounds, a.platform, detailed_model, False, STREAM_SIZES[0])
    large = stream_gap(launcher, build, stream_rounds, a.platform, detailed_model, False, STREAM_SIZES[1])
    byte_gap = max(0.0, (large - medium) / (STREAM_SIZES[1] - STREAM_SIZES[0]))
    send_gap = max(0.0, medium - STREAM_SIZES[0] * byte_gap)
    gaps = [f"flow.gap={gap!r}", f"flow.answer_gap={answer_gap!r}", f"flow.send_gap={send_gap!r}",
            f"flow.byte_gap={byte_gap!r}"]
    bare_flow = nodes + ["network.model=flow", *gaps, "flow.latency=0", "flow.small_latency=0",
                         "flow.bandwidth_factor=1"]
    detailed, flow = {}, {}
    for size in SIZES:
        rounds = rounds_for(size, a.quick)
        detailed[size] = one_way(launcher, build, size, rounds, a.platform, nodes + ["network.model=detailed"])
        flow[size] = one_way(launcher, build, size, rounds, a.platform, bare_flow)
    small_latency, latency, factor = fit(detailed, flow, small_size_of(launcher, a.platform))
    fitted = nodes + ["network.model=flow", *gaps, f"flow.small_latency={small_latency!r}",
                      f"flow.latency={latency!r}", f"flow.bandwidth_factor={factor!r}"]
    for acks, size, detailed_gap in ((False, 8, gap), (True, 8, answer_gap), (False, STREAM_SIZES[0], medium),
                                     (False, STREAM_SIZES[1], large)):
        flow_gap = stream_gap(launcher, build, stream_rounds, a.platform, fitted, acks, size)
        print(f"a busy NIC's time per message (windows of {WINDOW} puts of {size} B, {'with' if acks else 'without'} "
              f"ACKs): detailed {detailed_gap * 1e9:.1f} ns, fitted flow {flow_gap * 1e9:.1f} ns")
    print(f"{'size B':>9}  {'detailed us':>11}  {'bare flow us':>12}  {'fitted flow us':>14}  {'error':>7}")
    worst = 0.0
    for size in SIZES:
        with_fit = one_way(launcher, build, size, rounds_for(size, a.quick), a.platform, fitted)
        error = (with_fit - detailed[size]) / detailed[size]
        worst = max(worst, abs(error))
        print(f"{size:>9}  {detailed[size] * 1e6:>11.3f}  {flow[size] * 1e6:>12.3f}  {with_fit * 1e6:>14.3f}  "
              f"{error:>+7.1%}")
    print(f"flow.gap = {gap:.6g}\nflow.answer_gap = {answer_gap:.6g}\nflow.send_gap = {send_gap:.6g}\n"
          f"flow.byte_gap = {byte_gap:.6g}\nflow.small_latency = {small_latency:.6g}\nflow.latency = {latency:.6g}\n"
          f"flow.bandwidth_factor = {factor:.6g}\n"
          f"largest error on the ping-pong sweep: {worst:.1%}")
    if a.write:
        write_flow_table(a.write, {"gap": gap, "answer_gap": answer_gap, "send_gap": send_gap, "byte_gap": byte_gap,
                                   "small_latency": small_latency, "latency": latency,
                                   "bandwidth_factor": factor})
        print(f"written into {a.write}'s [flow] table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
