#!/usr/bin/env python3
"""What a run shows (docs/observability.md): a 4-rank MPI_Allreduce loop run with
--timeline, --paje and --summary under --cpu-model zero.

- the timeline has one track per rank, named after the summary's rank and node; on each,
  as many slices of each MPI function as the summary counts for that rank, with the same
  bytes and, summed, the same simulated time; the last slice ends at the makespan;
- every message the communication matrix counts leaves its rank as a flow; the matrix's
  rows add up to each rank's messages and bytes sent;
- pj_dump (pajeng) reads the Paje file, with the same MPI states and as many links;
- s4bxi-plot draws its pictures from the summary and the timeline;
- --timeline-filter keeps the ranks and the window asked for;
- observing changes nothing: the summary's simulated times without any observation option
  are the same.

usage: check_observation.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import collections
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
ROUNDS, COUNT = 20, 1024


def run(launcher, program, work, *options):
    result = launch(launcher, program, ROUNDS, COUNT, ranks=4, mpirun=True, timeout=120, options=options,
                    wall_timeout=150, env=launch_environment(), cwd=work)
    print(f"$ {' '.join(result.args)}\nstatus {result.returncode}\n{result.stdout}", flush=True)
    return result


def check_timeline(timeline, summary, errors):
    events = timeline["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    expected = {r["rank"]: f"rank {r['rank']} ({r['node']})" for r in summary["ranks"]}
    if names != expected:
        errors.append(f"tracks {names}, expected {expected}")
    slices = [e for e in events if e["ph"] == "X"]
    calls = collections.Counter((e["tid"], e["name"]) for e in slices if e["cat"] == "mpi")
    durations = collections.defaultdict(float)
    sizes = collections.defaultdict(int)
    for e in slices:
        if e["cat"] == "mpi":
            durations[(e["tid"], e["name"])] += e["dur"] * 1e-6
            sizes[(e["tid"], e["name"])] += e["args"].get("size", 0)
    table = {(r["rank"], f["function"]): r for f in summary["mpi"] for r in f["ranks"]}
    if set(calls) != set(table):
        errors.append(f"MPI functions on the tracks {sorted(set(calls))} differ from the summary's {sorted(table)}")
    for key, row in table.items():
        if calls[key] != row["calls"]:
            errors.append(f"rank {key[0]} {key[1]}: {calls[key]} slices, the summary counts {row['calls']}")
        if sizes[key] != row["bytes"]:
            errors.append(f"rank {key[0]} {key[1]}: {sizes[key]} bytes on the slices, the summary says {row['bytes']}")
        if abs(durations[key] - row["time"]) > 1e-9 * (row["calls"] + 1):
            errors.append(f"rank {key[0]} {key[1]}: {durations[key]} s on the slices, the summary says {row['time']}")
    for rank in expected:
        if calls[(rank, "MPI_Allreduce")] != ROUNDS:
            errors.append(f"rank {rank}: {calls[(rank, 'MPI_Allreduce')]} MPI_Allreduce slices, the program makes {ROUNDS}")
    allreduce_sizes = {e["args"].get("size") for e in slices if e["name"] == "MPI_Allreduce"}
    if allreduce_sizes != {COUNT * 8}:
        errors.append(f"MPI_Allreduce slice sizes {allreduce_sizes}, expected {COUNT * 8} bytes")
    last = max(e["ts"] + e["dur"] for e in slices)
    if abs(last - summary["makespan"] * 1e6) > 1e-3:
        errors.append(f"the last slice ends at {last} us, the makespan is {summary['makespan'] * 1e6} us")
    if not any(e["cat"] == "portals" and e["name"] == "PtlPut" and "peer" in e["args"] and "match_bits" in e["args"]
               for e in slices):
        errors.append("no PtlPut slice with its peer and match bits")
    flows = collections.Counter(e["tid"] for e in events if e["ph"] == "s")
    rows = collections.defaultdict(lambda: [0, 0])
    for pair in summary["communication"]:
        rows[pair["source"]][0] += pair["messages"]
        rows[pair["source"]][1] += pair["bytes"]
    for r in summary["ranks"]:
        if rows[r["rank"]] != [r["messages_sent"], r["bytes_sent"]]:
            errors.append(f"rank {r['rank']}: matrix row {rows[r['rank']]}, the rank sent "
                          f"{[r['messages_sent'], r['bytes_sent']]}")
        if flows[r["rank"]] != rows[r["rank"]][0]:
            errors.append(f"rank {r['rank']}: {flows[r['rank']]} flows, the matrix counts {rows[r['rank']][0]} messages")
    if not any(e["ph"] == "C" for e in events):
        errors.append("no counter of bytes in flight")
    return calls, sum(flows.values())


def check_paje(paje, calls, flows, errors):
    if not shutil.which("pj_dump"):
        errors.append("pj_dump is missing (Debian's pajeng: tools/setup installs it)")
        return
    dump = subprocess.run(["pj_dump", str(paje)], capture_output=True, text=True, timeout=60)
    if dump.returncode != 0 or dump.stderr.strip():
        errors.append(f"pj_dump: status {dump.returncode}: {dump.stderr[-800:]}")
        return
    states = collections.Counter()
    links = 0
    for line in dump.stdout.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if fields[0] == "State":
            states[(fields[1], fields[7])] += 1
        elif fields[0] == "Link":
            links += 1
    for (rank, function), n in calls.items():
        name = f"rank {rank} (node{rank})"
        if states[(name, function)] != n:
            errors.append(f"Paje: {states[(name, function)]} {function} states on {name}, the timeline has {n}")
    if links != flows:
        errors.append(f"Paje: {links} links, the timeline has {flows} flows")


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_allreduce"
    skip = why_skip(argv, program, launcher)
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    errors = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        observed = run(launcher, program, work, "--timeline", "run.json", "--paje", "run.paje", "--summary", "run-summary.json")
        plain = run(launcher, program, work, "--summary", "plain.json")
        if observed.returncode != 0 or plain.returncode != 0:
            return verdict([f"exit status {observed.returncode} / {plain.returncode}: {observed.stderr[-1500:]}"],
                           program.name, "")
        summary = json.loads((work / "run-summary.json").read_text())
        plain_summary = json.loads((work / "plain.json").read_text())
        observed_times = [(r["end_time"], r["portals_time"], r["portals_ops"]) for r in summary["ranks"]]
        plain_times = [(r["end_time"], r["portals_time"], r["portals_ops"]) for r in plain_summary["ranks"]]
        if observed_times != plain_times or summary["makespan"] != plain_summary["makespan"]:
            errors.append(f"observing changed the run: {observed_times} against {plain_times}")
        calls, flows = check_timeline(json.loads((work / "run.json").read_text()), summary, errors)
        check_paje(work / "run.paje", calls, flows, errors)

        plot = launcher.parent / "s4bxi-plot"
        drawn = subprocess.run([str(plot), str(work / "run-summary.json"), str(work / "run.json"), "-o",
                                str(work / "plots")], capture_output=True, text=True, timeout=120)
        print(drawn.stdout, drawn.stderr)
        for name in ("ranks", "matrix", "mpi", "gantt"):
            picture = work / "plots" / f"{name}.png"
            if drawn.returncode != 0 or not picture.exists() or picture.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
                errors.append(f"s4bxi-plot did not draw {picture.name} (status {drawn.returncode})")

        makespan_us = summary["makespan"] * 1e6
        start, end = makespan_us / 4, makespan_us / 2
        filtered = run(launcher, program, work, "--timeline", "part.json",
                       "--timeline-filter", f"ranks=1-2;time={start}us:{end}us")
        if filtered.returncode != 0:
            errors.append(f"filtered run: exit status {filtered.returncode}: {filtered.stderr[-800:]}")
        else:
            events = json.loads((work / "part.json").read_text())["traceEvents"]
            tids = {e["tid"] for e in events if e.get("pid") == 1 and e["ph"] != "M"}
            if tids != {1, 2}:
                errors.append(f"the filtered timeline shows ranks {sorted(tids)}, not 1 and 2")
            outside = [e for e in events if e["ph"] == "X" and (e["ts"] < start - 1e-3 or e["ts"] + e["dur"] > end + 1e-3)]
            if outside:
                errors.append(f"{len(outside)} slices outside the window, e.g. {outside[0]}")
    return verdict(errors, program.name, "the timeline, the Paje file and the pictures agree with the summary")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
