#!/usr/bin/env python3
"""Sandia OpenSHMEM's performance programs (latency, bandwidth, message rate; built
unmodified by tools/build-sos) on two simulated nodes under --cpu-model zero, beside the
model's expectation (tests/testkit/model.py) and our own Portals ping-pong
(bench/message_rate). The programs read the clock, which is the simulated one: their
figures are simulated latencies and bandwidths.

usage: bench/shmem_perf.py [BUILD_DIR] [--sos PREFIX] [--check TOLERANCE]
Prints the figures. With --check, exits 1 when a latency or the large-message bandwidth
is off the model's expectation by more than TOLERANCE (a fraction, e.g. 0.03); 77 when
SOS is not built.

The expectations, from the model's timelines (docs/openshmem.md derives them). SOS's heap
entry generates no full event and counts what lands on a counter, so the target's NIC sends
the PTL ACK without writing an event first, and counting events cost nothing: the ACK is
counted at the initiator at ack(size) = put_timeline(size)["PUT"] - event_delivery() +
send preparation + network(PTL ACK). Then, by SOS's path for shmem_putmem + shmem_quiet:
- up to max_volatile_size (64 B, nic.limits): a PIO put from a volatile MD: ack(size);
- up to SOS's bounce size (2 KiB): copied to a bounce buffer, sent from an MD with full
  events: the NIC writes the SEND event before it counts the ACK: ack(size) + pci(EVENT);
- larger: shmem_putmem waits for the SEND event itself: ack(size) + pci(EVENT) + the
  route's latency to the core.
- get latency (shmem_getmem): the REPLY counted: get_timeline(size)["REPLY"] -
  event_delivery();
- the shmem_long_p ping-pong (atomic set, wait_until on the target's counter): half a round
  trip is the put counted at the target, put_timeline(8)["PUT"] - event_delivery();
- put bandwidth of large messages: the BXI link's, link_bandwidth / CROSS_TRAFFIC;
- the Portals ping-pong's one-way time: put_timeline(size)["PUT"] (a full event at the
  target, which the program waits for).
"""
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # tests/: testkit
from testkit import model  # noqa: E402
from testkit.launch import launch  # noqa: E402
from testkit.sos import sos_prefix  # noqa: E402

SIZES = [8, 64, 512, 4096, 65536, 1048576]
SKIP = 77
MAX_VOLATILE = 64  # nic.limits.max_volatile_size of the default platform
SOS_BOUNCE = 2048  # SOS's default SHMEM_BOUNCE_SIZE


def expected_put(platform, size):
    """shmem_putmem + shmem_quiet, in seconds (see above)."""
    volatile = size <= MAX_VOLATILE
    ack = (platform.put_timeline(size, volatile=volatile)["PUT"] - platform.event_delivery() +
           model.SEND_PREPARATION + platform.network(model.Platform.ACK))
    if volatile:
        return ack
    if size <= SOS_BOUNCE:
        return ack + platform.pci(model.EVENT)
    return ack + platform.pci(model.EVENT) + platform.pci_latency()


def arguments():
    args = sys.argv[1:]
    options = {"--sos": None, "--check": None}
    positional = []
    while args:
        arg = args.pop(0)
        if arg in options:
            if not args:
                sys.exit(f"shmem_perf.py: {arg} needs a value")
            options[arg] = args.pop(0)
        elif arg.startswith("-"):
            sys.exit(f"shmem_perf.py: unknown option {arg} (usage: shmem_perf.py [BUILD_DIR] [--sos PREFIX] "
                     f"[--check TOLERANCE])")
        else:
            positional.append(arg)
    build = Path(positional[0] if positional else "build").resolve()
    tolerance = None
    if options["--check"] is not None:
        try:
            tolerance = float(options["--check"])
        except ValueError:
            tolerance = -1
        if not 0 < tolerance < 1:
            sys.exit(f"shmem_perf.py: --check takes a fraction between 0 and 1, not {options['--check']}")
    return build, options["--sos"], tolerance


def run(launcher, program, *args):
    with tempfile.NamedTemporaryFile(suffix=".json") as summary:
        done = launch(launcher, program, *args, timeout=300, summary=summary.name, wall_timeout=None)
        if done.returncode != 0:
            sys.exit(f"{program.name} {' '.join(map(str, args))}: status {done.returncode}\n{done.stderr[-2000:]}")
        return done.stdout, json.load(open(summary.name))


def table(text, title=None):
    """{size: first figure} of the last size/figure table in the output (after `title`)."""
    if title:
        text = text[text.index(title):]
    rows = {}
    for line in text.splitlines():
        match = re.match(r"^\s+(\d+)\s+([\d.]+)", line)
        if match:
            rows[int(match.group(1))] = float(match.group(2))
        elif rows and title:
            break
    return rows


def main():
    build, sos, tolerance = arguments()
    launcher = build / "launcher" / "s4bxi-launch"
    try:
        sos = sos_prefix(launcher, sos)
    except LookupError as why:
        print(f"skipped: {why}")
        return SKIP
    perf = sos / "tests" / "performance"
    suite = perf / "shmem_perf_suite"
    platform = model.Platform()
    common = ["-p", "10", "-n", "40", "-s", str(SIZES[0]), "-e", str(SIZES[-1])]

    put_out, _ = run(launcher, suite / "shmem_latency_put_perf", *common)
    get_out, _ = run(launcher, suite / "shmem_latency_get_perf", *common)
    put_latency = table(put_out.split("shmem_int_p results:")[1].split("Message Size", 2)[2])
    get_latency = table(get_out.split("shmem_int_g results:")[1].split("Message Size", 2)[2])
    pingpong_8 = float(re.search(r"Ping-Pong shmem_long_p results:.*?\n\s+8\s+([\d.]+)", put_out, re.S).group(1))
    bw_out, _ = run(launcher, suite / "shmem_bw_put_perf", "-p", "4", "-n", "8", "-w", "16", "-s", "65536", "-e",
                       "4194304")
    bandwidth = table(bw_out.split("Message Rate")[1])
    rate_out, _ = run(launcher, perf / "tests" / "msgrate", "-n", "1", "-p", "1", "-i", "100")

    portals = {}
    for size in SIZES:
        rounds = 200
        _, summary = run(launcher, build / "bench" / "message_rate", rounds, size)
        _, baseline = run(launcher, build / "bench" / "message_rate", 0, size)
        portals[size] = (summary["makespan"] - baseline["makespan"]) / (2 * rounds) * 1e6

    print("Latency on two nodes, one switch, --cpu-model zero (µs, simulated)")
    print(f"{'bytes':>8s} {'SOS put':>9s} {'model':>9s} {'SOS get':>9s} {'model':>9s} "
          f"{'Portals ping-pong':>18s} {'model':>9s}")
    problems = []
    for size in SIZES:
        expected_put_us = expected_put(platform, size) * 1e6
        expected_get = (platform.get_timeline(size)["REPLY"] - platform.event_delivery()) * 1e6
        expected_pingpong = platform.put_timeline(size)["PUT"] * 1e6
        print(f"{size:8d} {put_latency[size]:9.2f} {expected_put_us:9.2f} {get_latency[size]:9.2f} {expected_get:9.2f} "
              f"{portals[size]:18.2f} {expected_pingpong:9.2f}")
        for what, got, want in (("put", put_latency[size], expected_put_us), ("get", get_latency[size], expected_get),
                                ("Portals ping-pong", portals[size], expected_pingpong)):
            if tolerance and abs(got - want) > tolerance * want + 0.01:  # SOS prints two decimals
                problems.append(f"{what} latency of {size} B: {got:.2f} µs, the model says {want:.2f}")
    expected_pingpong_8 = (platform.put_timeline(8)["PUT"] - platform.event_delivery()) * 1e6
    print(f"SOS shmem_long_p ping-pong (atomic set + wait_until), half round trip: {pingpong_8:.2f} µs, "
          f"model {expected_pingpong_8:.2f}")
    if tolerance and abs(pingpong_8 - expected_pingpong_8) > tolerance * expected_pingpong_8 + 0.01:
        problems.append(f"shmem_long_p ping-pong: {pingpong_8:.2f} µs, the model says {expected_pingpong_8:.2f}")

    link = platform.bxi["link_bandwidth"] / model.CROSS_TRAFFIC / 1e6
    print(f"\nPut bandwidth (shmem_bw_put_perf, window of 16), MB/s; the link's: {link:.0f}")
    for size, figure in sorted(bandwidth.items()):
        print(f"{size:8d} {figure:10.1f}  {figure / link * 100:5.1f} % of the link")
    largest = max(bandwidth)
    if tolerance and bandwidth[largest] < (1 - tolerance) * link:
        problems.append(f"put bandwidth of {largest} B: {bandwidth[largest]:.0f} MB/s, the link's is {link:.0f}")
    rates = re.findall(r"^\s*(single direction|pre-post|all-to-all):\s+([\d.]+)$", rate_out, re.M)
    print("\nmsgrate -n 1 -p 1 (8-byte puts, 128 per iteration), messages per simulated second:")
    for name, value in rates:
        print(f"  {name:18s} {float(value):12.0f}")
    if not rates:
        problems.append(f"msgrate printed no rate:\n{rate_out}")
    if problems:
        print("FAIL: " + "; ".join(problems), file=sys.stderr)
        return 1
    if tolerance:
        print(f"ok: latencies and bandwidth within {tolerance * 100:g} % of the model")
    return 0


if __name__ == "__main__":
    sys.exit(main())
