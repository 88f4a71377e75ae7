#!/usr/bin/python3
"""s4bxi-plot: pictures of an s4bxi run, from its summary and its timeline.

    s4bxi-plot SUMMARY.json [TIMELINE.json] -o DIR [--format png|svg]
               [--netpipe FILE [--label TEXT] [--config FILE] [--beside FILE [--beside-label TEXT]]]

Writes into DIR (created if missing):
  ranks.EXT        per rank, stacked: computing, in MPI/Portals calls, blocked in a wait
  matrix.EXT       the communication matrix: bytes from each rank (row) to each rank (column)
  mpi.EXT          time per MPI function and rank (MPI programs only)
  gantt.EXT        the timeline as a Gantt chart (TIMELINE.json given, at most 64 ranks)
  netpipe.EXT      latency and bandwidth against message size (--netpipe: NetPIPE's np.out),
                   beside the model's (--config: what `s4bxi-launch --print-config` printed
                   for the run's platform and options), and beside another curve in the same
                   format (--beside: e.g. the same program run natively); --label and
                   --beside-label name the two curves
  netpipe.csv      the same numbers: size, measured and model one-way time and Mbit/s
and prints the path of each file it wrote. Exit status 2 for bad input.
"""
import argparse
import json
import os
import sys

MAX_GANTT_RANKS = 64
COLOURS = {"compute": "#4c72b0", "mpi": "#dd8452", "portals": "#55a868", "wait": "#c44e52", "sleep": "#8172b3"}


def fail(message):
    print(f"s4bxi-plot: error: {message}", file=sys.stderr)
    sys.exit(2)


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail(f"cannot read the {what} {path}: {e.strerror}")
    except ValueError as e:
        fail(f"the {what} {path} is not JSON: {e}")


def per_rank_bars(plt, summary, out):
    ranks = sorted(summary.get("ranks", []), key=lambda r: r["rank"])
    if not ranks:
        return None
    ids = [r["rank"] for r in ranks]
    compute = [r.get("compute_time", 0.0) for r in ranks]
    blocked = [r.get("wait_time", 0.0) for r in ranks]
    calls = [max(0.0, max(r.get("mpi_time", 0.0), r.get("portals_time", 0.0)) - r.get("wait_time", 0.0)) for r in ranks]
    other = [max(0.0, r.get("end_time", 0.0) - c - b - m) for r, c, b, m in zip(ranks, compute, blocked, calls)]
    fig, ax = plt.subplots(figsize=(max(6, len(ids) * 0.35), 4))
    bottom = [0.0] * len(ids)
    for label, values, colour in (("computing", compute, COLOURS["compute"]),
                                  ("in MPI/Portals calls", calls, COLOURS["mpi"]),
                                  ("blocked in a wait", blocked, COLOURS["wait"]),
                                  ("other (sleep, outside)", other, "#cccccc")):
        ax.bar(ids, [v * 1e3 for v in values], bottom=[b * 1e3 for b in bottom], label=label, color=colour)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xlabel("rank")
    if len(ids) <= 32:
        ax.set_xticks(ids)
    ax.set_ylabel("simulated time (ms)")
    ax.set_title(f"Where each rank's time went (makespan {summary.get('makespan', 0) * 1e3:.3f} ms)")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def matrix(plt, summary, out):
    n = summary.get("world_size", 0)
    pairs = [p for p in summary.get("communication", []) if 0 <= p["source"] < n and 0 <= p["destination"] < n]
    if n == 0 or not pairs:
        return None
    grid = [[0.0] * n for _ in range(n)]
    for p in pairs:
        grid[p["source"]][p["destination"]] += p["bytes"]
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    image = ax.imshow(grid, cmap="viridis", origin="upper")
    fig.colorbar(image, ax=ax, label="bytes sent")
    ax.set_xlabel("destination rank")
    ax.set_ylabel("source rank")
    ax.set_title("Communication matrix")
    if n <= 16:
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def mpi_table(plt, summary, out):
    functions = summary.get("mpi", [])[:10]
    if not functions:
        return None
    n = summary.get("world_size", 0)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(functions) + 1.5))
    left = [0.0] * len(functions)
    cmap = plt.get_cmap("tab20")
    for rank in range(n):
        widths = []
        for f in functions:
            widths.append(sum(r["time"] for r in f["ranks"] if r["rank"] == rank) * 1e3)
        ax.barh([f["function"] for f in functions], widths, left=left, color=cmap(rank % 20),
                label=f"rank {rank}" if n <= 16 else None)
        left = [a + b for a, b in zip(left, widths)]
    ax.invert_yaxis()
    ax.set_xlabel("simulated time, all ranks together (ms)")
    ax.set_title("Time in MPI functions")
    if n <= 16:
        ax.legend(fontsize="x-small", ncol=2)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def gantt(plt, timeline, out):
    events = timeline.get("traceEvents", timeline if isinstance(timeline, list) else [])
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") == 1}
    slices = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1]
    ranks = sorted({e["tid"] for e in slices} | set(names))
    if not ranks:
        return None
    if len(ranks) > MAX_GANTT_RANKS:
        print(f"s4bxi-plot: no Gantt chart: {len(ranks)} ranks (at most {MAX_GANTT_RANKS}; "
              "write a timeline with --timeline-filter ranks=...)", file=sys.stderr)
        return None
    row = {rank: i for i, rank in enumerate(ranks)}
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(ranks) + 1.5))
    # Longer slices first: the calls inside an MPI call are drawn over it.
    for e in sorted(slices, key=lambda e: -e.get("dur", 0)):
        colour = COLOURS.get(e.get("cat"), "#999999")
        inner = e.get("cat") in ("portals", "wait", "compute")
        ax.broken_barh([(e["ts"], max(e.get("dur", 0), 1e-3))], (row[e["tid"]] - (0.25 if inner else 0.4),
                                                                  0.5 if inner else 0.8), color=colour)
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels([names.get(r, f"rank {r}") for r in ranks])
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (µs)")
    ax.set_title("Timeline")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color=c, label=l) for l, c in COLOURS.items()], fontsize="small", loc="upper right")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    return out


def read_config(path):
    """The effective configuration `s4bxi-launch --print-config` printed: {key: value}."""
    config = {}
    try:
        with open(path) as f:
            for line in f:
                text = line.split("#", 1)[0].strip()
                if "=" not in text:
                    continue
                key, value = (part.strip() for part in text.split("=", 1))
                try:
                    config[key] = float(value)
                except ValueError:
                    config[key] = value.strip('"')
    except OSError as e:
        fail(f"cannot read the configuration {path}: {e.strerror}")
    return config


CROSS_TRAFFIC = 1.05  # SimGrid's reverse-route load: a lone flow on a shared link gets bw / 1.05


def model_one_way(config):
    """The model's one-way time of a NetPIPE message (docs/model.md): one Portals put from
    the call to the target's event, NIC to NIC through one switch, as a function of the size
    in bytes; None with the reason when the configuration is outside what it covers."""
    needed = ["pcie.limiter_bandwidth", "pcie.limiter_latency", "pcie.shared_bandwidth", "pcie.shared_latency",
              "bxi.link_bandwidth", "bxi.link_latency", "nic.timings.pci_latency_heuristic",
              "nic.timings.pci_heuristic_bandwidth", "nic.timings.packet_size", "nic.timings.send_preparation",
              "nic.timings.command_size", "nic.timings.dma_request_size", "nic.timings.event_size",
              "nic.timings.inline_matching"]
    missing = [key for key in needed if not isinstance(config.get(key), float)]
    if missing:
        return None, f"the configuration lacks {', '.join(missing)}"
    if config.get("platform.topology") != "switch":
        return None, f"the model's formula is for the 'switch' topology, not {config.get('platform.topology')!r}"
    if config.get("nic.model_pci") != "true" or config.get("nic.model_pci_commands") != "true":
        return None, "the model's formula is for nic.model_pci and nic.model_pci_commands on"
    c = config
    pci_latency = c["pcie.limiter_latency"] + c["pcie.shared_latency"]
    pci_rate = min(c["pcie.limiter_bandwidth"], c["pcie.shared_bandwidth"] / CROSS_TRAFFIC)

    def pci(size):
        return pci_latency + size / pci_rate

    def one_way(size):
        t = pci(c["nic.timings.command_size"]) + c["nic.timings.send_preparation"]
        if size > c["nic.timings.inline_matching"]:  # DMA: request, then the first packet
            t += pci(c["nic.timings.dma_request_size"]) + c["nic.timings.pci_latency_heuristic"] \
                + min(size, c["nic.timings.packet_size"]) / c["nic.timings.pci_heuristic_bandwidth"]
        t += 2 * c["bxi.link_latency"] + size * CROSS_TRAFFIC / c["bxi.link_bandwidth"]  # the two BXI links
        return t + pci(c["nic.timings.event_size"]) + pci_latency  # event write, hand-over to the core

    return one_way, None


def read_netpipe(path):
    """(sizes, one-way µs, Mbit/s) of NetPIPE's rows (bytes, Mbps, seconds) in `path`."""
    sizes, latencies, bandwidths = [], [], []
    try:
        with open(path) as f:
            for line in f:
                fields = line.split()
                if len(fields) < 3:
                    continue
                try:
                    size, mbps, seconds = float(fields[0]), float(fields[1]), float(fields[2])
                except ValueError:
                    continue
                sizes.append(size)
                bandwidths.append(mbps)
                latencies.append(seconds * 1e6)
    except OSError as e:
        fail(f"cannot read the NetPIPE output {path}: {e.strerror}")
    if not sizes:
        fail(f"{path} has no NetPIPE rows (bytes, Mbps, seconds)")
    return sizes, latencies, bandwidths


def netpipe(plt, path, out, config_path, label="measured (NetPIPE)", beside=None, beside_label="beside"):
    sizes, latencies, bandwidths = read_netpipe(path)
    model = None
    if config_path:
        model, why = model_one_way(read_config(config_path))
        if not model:
            print(f"s4bxi-plot: no model curve: {why}", file=sys.stderr)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.loglog(sizes, latencies, marker=".", label=label)
    left.set_xlabel("message size (bytes)")
    left.set_ylabel("one-way time (µs)")
    left.set_title("Latency")
    right.semilogx(sizes, bandwidths, marker=".", label=label)
    if beside:
        other_sizes, other_latencies, other_bandwidths = read_netpipe(beside)
        left.loglog(other_sizes, other_latencies, marker="x", label=beside_label)
        right.semilogx(other_sizes, other_bandwidths, marker="x", label=beside_label)
    right.set_xlabel("message size (bytes)")
    right.set_ylabel("Mbit/s")
    right.set_title("Bandwidth")
    rows = [[size, latency * 1e-6, mbps] for size, latency, mbps in zip(sizes, latencies, bandwidths)]
    if model:
        times = [model(size) for size in sizes]
        for row, t in zip(rows, times):
            row += [t, row[0] * 8 / t / 1e6]
        label = "model: one Portals put, call to target event"
        left.loglog(sizes, [t * 1e6 for t in times], linestyle="--", color="black", label=label)
        right.semilogx(sizes, [row[4] for row in rows], linestyle="--", color="black", label=label)
    for axes in (left, right):
        axes.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    table = os.path.splitext(out)[0] + ".csv"
    with open(table, "w") as f:
        f.write("size,one_way_s,mbps" + (",model_one_way_s,model_mbps" if model else "") + "\n")
        for row in rows:
            f.write(",".join(f"{value:.9g}" for value in row) + "\n")
    return out + "\n" + table


def main():
    parser = argparse.ArgumentParser(prog="s4bxi-plot", description="Pictures of an s4bxi run.")
    parser.add_argument("summary", help="the run's summary (s4bxi-launch --summary FILE)")
    parser.add_argument("timeline", nargs="?", help="the run's timeline (s4bxi-launch --timeline FILE)")
    parser.add_argument("-o", "--output", required=True, help="directory for the pictures (created if missing)")
    parser.add_argument("--format", choices=("png", "svg"), default="png")
    parser.add_argument("--netpipe", help="NetPIPE's output (np.out) to draw latency and bandwidth from")
    parser.add_argument("--config", help="the run's effective configuration (saved output of s4bxi-launch "
                        "--print-config with the run's platform and options): draws the model beside NetPIPE")
    parser.add_argument("--label", default="measured (NetPIPE)", help="the name of --netpipe's curve")
    parser.add_argument("--beside", help="another curve in NetPIPE's format to draw beside --netpipe's (the same "
                        "program run natively, another platform...)")
    parser.add_argument("--beside-label", default="beside", help="the name of --beside's curve")
    args = parser.parse_args()
    summary = load_json(args.summary, "summary")
    if not isinstance(summary, dict) or "ranks" not in summary:
        fail(f"{args.summary} is not an s4bxi run summary")
    timeline = load_json(args.timeline, "timeline") if args.timeline else None
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        fail(f"cannot create {args.output}: {e.strerror}")
    if not os.access(args.output, os.W_OK):
        fail(f"{args.output} is not writable")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    path = lambda name: os.path.join(args.output, f"{name}.{args.format}")
    written = [per_rank_bars(plt, summary, path("ranks")), matrix(plt, summary, path("matrix")),
               mpi_table(plt, summary, path("mpi"))]
    if timeline is not None:
        written.append(gantt(plt, timeline, path("gantt")))
    if args.netpipe:
        written.append(netpipe(plt, args.netpipe, path("netpipe"), args.config, args.label, args.beside,
                               args.beside_label))
    for file in written:
        if file:
            print(file)


if __name__ == "__main__":
    main()
