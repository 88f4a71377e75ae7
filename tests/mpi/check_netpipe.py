#!/usr/bin/env python3
"""Debian's unmodified NetPIPE (NPopenmpi) under s4bxi-launch, with the launcher's Open MPI
defaults and --cpu-model zero: its latency and bandwidth curve must follow the model.

usage: check_netpipe.py LAUNCHER

- Latency (the smallest message's one-way time, NetPIPE's third column): at least one
  Portals put from the call to the target's event (nothing is faster), at most a put and its
  acknowledgement (Open MPI's MTL completes a short send on the ACK before the next call).
  NetPIPE times its -n round trips with gettimeofday, to the microsecond, and prints
  seconds to 10 ns: the lower bound gives up one microsecond over the 2n one-way trips and
  the printing's rounding.
- Bandwidth of the largest message (8 MiB): at most what the BXI links carry, at least 90 %
  of it (a large message is a single put whose time is the network transfer's).
Exit status 0 (pass), 1 (fail), 77 (NPopenmpi, mpirun or the components missing).
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit import model  # noqa: E402
from testkit.launch import command, run  # noqa: E402
from testkit.mpi_env import launch_environment, missing_components  # noqa: E402

SKIP = 77
LARGEST = 8 << 20
REPEATS = 20  # NetPIPE's -n


def main():
    launcher = Path(sys.argv[1])
    netpipe = shutil.which("NPopenmpi")
    if not netpipe or not shutil.which("mpirun"):
        print("SKIP: NPopenmpi or mpirun not found (package netpipe-openmpi)")
        return SKIP
    missing = missing_components(launcher)
    if missing:
        print(f"SKIP: {missing}")
        return SKIP
    platform = model.Platform()
    fastest = platform.put_to_target_event(1) - 1e-6 / (2 * REPEATS) - 5e-9
    slowest = 2 * platform.put_to_target_event(1)
    link_rate = LARGEST / platform.network(LARGEST)

    env = launch_environment()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "np.out")
        # -n 20: a fixed repeat count (NetPIPE would otherwise pick tens of thousands for
        # microsecond latencies); -p 0: the listed sizes only.
        argv = command(launcher, netpipe, "-n", REPEATS, "-p", "0", "-u", LARGEST, "-o", out, ranks=2, mpirun=True,
                       timeout=240)
        print("$", " ".join(argv), flush=True)
        done = run(argv, wall_timeout=300, env=env)
        if done.returncode != 0:
            print(f"FAIL: status {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        if "not find" in done.stderr or not os.path.exists(out):
            print(f"FAIL: NetPIPE wrote no output file\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        rows = [line.split() for line in open(out) if line.strip()]
    curve = {int(size): (float(mbps), float(seconds)) for size, mbps, seconds in rows}
    print("\n".join(f"{size:>9} B  {mbps:>10.1f} Mbps  {seconds * 1e6:>9.3f} us" for size, (mbps, seconds) in
                    sorted(curve.items())))
    latency = curve[min(curve)][1]
    bandwidth = curve[LARGEST][0] * 1e6 / 8  # NetPIPE's Mbps are 10^6 bits per second
    print(f"latency {latency * 1e9:.1f} ns, model bounds [{fastest * 1e9:.1f}, {slowest * 1e9:.1f}] ns")
    print(f"bandwidth at 8 MiB {bandwidth / 1e9:.3f} GB/s, model link rate {link_rate / 1e9:.3f} GB/s")
    failures = []
    if not fastest <= latency <= slowest:
        failures.append(f"latency {latency * 1e9:.1f} ns outside [{fastest * 1e9:.1f}, {slowest * 1e9:.1f}] ns")
    if not 0.9 * link_rate <= bandwidth <= link_rate * 1.001:
        failures.append(f"bandwidth {bandwidth / 1e9:.3f} GB/s outside [90 %, 100 %] of {link_rate / 1e9:.3f} GB/s")
    if failures:
        print("FAIL: " + "; ".join(failures), file=sys.stderr)
        return 1
    print("ok netpipe")
    return 0


if __name__ == "__main__":
    sys.exit(main())
