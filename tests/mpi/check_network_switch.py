#!/usr/bin/env python3
"""Switching network models during a run (docs/network-models.md, "Switching network models"), with
stock Open MPI and no change to the program: mpi_network_switch.c's two phases of
MPI_Alltoallv rounds of mixed sizes, every byte checked, on 4 ranks, --cpu-model zero.

- Wholly detailed and wholly flow: the references.
- Switched at the program's MPI_Pcontrol (--network-model-switch pcontrol): phase A under
  the flow model, phase B under the detailed one. Phase B's time is the wholly detailed
  run's (within 1 %); the summary's spans and the timeline's counter track say which model
  ran when, and the time under each adds up to the makespan; two runs print the same bytes
  and the same summary dates.
- Switched every SWITCH_PERIOD of simulated time by a schedule of dates: messages are in
  flight at every switch, and none is lost, duplicated, or overtaken (bytes checked).
- MPI_Pcontrol called by rank 0 only: no switch, and the summary says so; called under
  network.switch = dates: no switch, and the summary says so.

usage: check_network_switch.py LAUNCHER PROGRAM_DIR [--skip REASON]"""
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: testkit
from testkit.launch import alternating_models, launch  # noqa: E402
from testkit.mpi_env import launch_environment, verdict, why_skip  # noqa: E402

SKIP = 77
RANKS = 4
ROUNDS = ["12", "12"]  # phase A, phase B
SWITCH_PERIOD = 20e-6  # s, the schedule's: shorter than a round of alltoallv (about 25 us)


def phase_times(stdout):
    times = {}
    for line in stdout.splitlines():
        if line.startswith("phase "):
            name, value = line.split(":")
            times[name.split()[1]] = float(value.split()[0])
    return times


def main(argv):
    launcher, program = Path(argv[1]), Path(argv[2]) / "mpi_network_switch"
    skip = why_skip(argv, program, launcher)
    if skip:
        print(f"SKIP: {skip}")
        return SKIP
    env = launch_environment()
    errors = []
    work = Path(tempfile.mkdtemp(prefix="s4bxi-switch-"))

    def run(name, mode, options):
        summary = work / f"{name}.json"
        done = launch(launcher, program, *ROUNDS, mode, ranks=RANKS, mpirun=True, cpu_model="zero", timeout=120,
                      wall_timeout=180, env=env, options=options, summary=summary)
        print(f"$ {' '.join(done.args)}\nstatus {done.returncode}\n{done.stdout.strip()}", flush=True)
        if done.returncode != 0 or "mpi_network_switch: ok" not in done.stdout:
            errors.append(f"{name}: exit status {done.returncode}: {done.stderr[-1500:]}")
            return None, None, None
        return phase_times(done.stdout), json.loads(summary.read_text()), done.stdout

    def spans_of(summary):
        return [(s["model"], s["from"]) for s in summary["network_models"]["spans"]]

    detailed, detailed_summary, _ = run("detailed", "none", ["--network-model", "detailed"])
    flow, flow_summary, _ = run("flow", "none", ["--network-model", "flow"])
    if not detailed or not flow:
        return verdict(errors, program.name, "")
    print(f"wholly detailed: {detailed}; wholly flow: {flow}")
    if spans_of(detailed_summary) != [("detailed", 0.0)] or spans_of(flow_summary) != [("flow", 0.0)]:
        errors.append(f"one-model runs: spans {spans_of(detailed_summary)}, {spans_of(flow_summary)}")

    # Switched at MPI_Pcontrol, twice: the same bytes, the same dates.
    timeline = work / "switched.json"
    switched, switched_summary, switched_out = run("pcontrol", "pcontrol",
                                                   ["--network-model-switch", "pcontrol", "--timeline", timeline])
    again, again_summary, again_out = run("pcontrol-again", "pcontrol", ["--network-model-switch", "pcontrol"])
    if switched and again:
        models = switched_summary["network_models"]
        spans = spans_of(switched_summary)
        print(f"switched at MPI_Pcontrol: {switched}; spans {spans}")
        if [model for model, _ in spans] != ["detailed", "flow", "detailed"]:
            errors.append(f"MPI_Pcontrol(0) then MPI_Pcontrol(1) on every rank gave the spans {spans}")
        error = abs(switched["B"] - detailed["B"]) / detailed["B"]
        print(f"phase B (detailed) switched {switched['B']:.9f} s, wholly detailed {detailed['B']:.9f} s: "
              f"{100 * error:.3f} % apart")
        if error > 0.01:
            errors.append(f"phase B after the switch to detailed took {switched['B']} s, the detailed model's "
                          f"{detailed['B']} s: {100 * error:.2f} % apart, more than 1 %")
        makespan = switched_summary["makespan"]
        total = models["time_detailed"] + models["time_flow"]
        if abs(total - makespan) > 1e-12 or models["time_flow"] <= 0:
            errors.append(f"time under each model: {models['time_detailed']} + {models['time_flow']}, makespan "
                          f"{makespan}")
        if switched_out != again_out or spans_of(again_summary) != spans or \
                again_summary["makespan"] != makespan:
            errors.append("two runs switched at MPI_Pcontrol differ: "
                          f"{spans} / {spans_of(again_summary)}, {makespan} / {again_summary['makespan']}")
        track = [event for event in json.loads(timeline.read_text())["traceEvents"]
                 if event.get("ph") == "C" and event.get("name", "").startswith("network model")]
        # The timeline's dates are in microseconds with nanosecond digits.
        shown = [(event["args"]["detailed"], event["ts"] * 1e-6) for event in track]
        expected = [(1 if model == "detailed" else 0, start) for model, start in spans]
        if len(shown) != len(expected) or any(a[0] != b[0] or abs(a[1] - b[1]) > 1e-9
                                              for a, b in zip(shown, expected)):
            errors.append(f"the timeline's network model track {shown}, the summary's spans {expected}")

    # A schedule that switches every SWITCH_PERIOD, through both phases.
    makespan = detailed_summary["makespan"]
    count = int(makespan / SWITCH_PERIOD) + 2
    schedule = alternating_models(round(SWITCH_PERIOD * 1e9), count)
    dated, dated_summary, _ = run("dates", "none", ["--network-model", schedule])
    if dated:
        spans = spans_of(dated_summary)
        print(f"switched every {SWITCH_PERIOD * 1e6:g} us: {dated}; {len(spans)} spans")
        if len(spans) < makespan / SWITCH_PERIOD / 2:
            errors.append(f"a schedule of {count} phases gave {len(spans)} spans in {dated_summary['makespan']} s")

    # MPI_Pcontrol on rank 0 only, or under network.switch = dates: nothing switches, and
    # the summary says why.
    for name, mode, options, note in [
            ("pcontrol-rank0", "pcontrol-rank0", ["--network-model-switch", "pcontrol"], "called by 1 of 4 ranks"),
            ("pcontrol-ignored", "pcontrol", [], "switched nothing")]:
        _, summary, _ = run(name, mode, options)
        if summary:
            notes = summary["network_models"]["notes"]
            print(f"{name}: spans {spans_of(summary)}, notes {notes}")
            if spans_of(summary) != [("detailed", 0.0)] or not any(note in n for n in notes):
                errors.append(f"{name}: spans {spans_of(summary)}, notes {notes}: want one detailed span and "
                              f"a note saying '{note}'")

    return verdict(errors, program.name, "switched runs: every byte right, the detailed phase at the detailed "
                                         "model's time, the spans in the summary and the timeline")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
