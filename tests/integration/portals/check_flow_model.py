#!/usr/bin/env python3
"""The flow model (--network-model flow, docs/network-models.md "The flow model"): each operation's
dates follow its formula (tests/testkit/model.py, FlowTimeline), to the nanosecond; the
model is chosen the same way by the option, the environment and a platform file; bad
values are refused, before any rank starts, with a message naming the key and the value.

usage: check_flow_model.py LAUNCHER TIMELINE_PROGRAM"""
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import steps as timeline_steps  # noqa: E402
from testkit.model import FlowTimeline, Platform  # noqa: E402
from testkit.launch import command, environment, launch, run  # noqa: E402

launcher, timeline_program = sys.argv[1], sys.argv[2]
flow = FlowTimeline(Platform())
M = 1 << 20
failures = []


def steps_of(done, label):
    if done.returncode != 0:
        sys.exit(f"{label}: failed ({done.returncode}): {done.stderr[-3000:]}")
    return timeline_steps.parse(done.stdout)


steps = steps_of(launch(launcher, timeline_program, options=("--network-model", "flow")), "--network-model flow")
expected = {case: flow.put(size) for case, size in
            (("put8", 8), ("put64vol", 64), ("put65", 65), ("put512", 512), ("put1M", M))}
expected["atomic8"] = flow.put(8, target_event="ATOMIC")
expected.update({case: flow.get(size) for case, size in (("get8", 8), ("get512", 512), ("get1M", M))})
expected.update({case: flow.get(8, fetch=True) for case in ("fetch8", "swap8")})
failures += timeline_steps.compare(expected, steps)

def from_call(steps):
    """Each step's date after its case's call."""
    return {case: {step: t - s["call"] for step, t in s.items()} for case, s in steps.items()}


# The same run, the model chosen by the environment and by a platform file.
reference = from_call(steps)
line = command(launcher, timeline_program, ranks=2)
by_env = steps_of(run(line, env=environment({"S4BXI_NETWORK_MODEL": "flow"})), "S4BXI_NETWORK_MODEL=flow")
with tempfile.NamedTemporaryFile("w", suffix=".toml") as platform:
    platform.write('[network]\nmodel = "flow"\n')
    platform.flush()
    by_file = steps_of(launch(launcher, timeline_program, options=("--platform", platform.name)), "[network] model")
for label, other in (("S4BXI_NETWORK_MODEL=flow", by_env), ("a platform file's [network] model", by_file)):
    dates = from_call(other)
    print(f"{label}: {'the same dates' if dates == reference else 'OTHER DATES'}")
    if dates != reference:
        failures.append(f"{label} gave other dates than --network-model flow")

# The run summary says which model ran: in its JSON, and in the printed summary.
with tempfile.TemporaryDirectory() as folder:
    summary = Path(folder) / "summary.json"
    done = launch(launcher, timeline_program, quiet=False, summary=summary, options=("--network-model", "flow"))
    model = json.loads(summary.read_text())["platform"]["network_model"] if summary.exists() else None
    printed = re.search(r"^\s*network model\s+flow", done.stderr + done.stdout, re.M)
    print(f"run summary: platform.network_model = {model!r}, {'printed' if printed else 'NOT PRINTED'}")
    if model != "flow" or not printed:
        failures.append(f"the run summary does not say the flow model ran (network_model {model!r})")

# What the flow model does not have is off, and says why.
config = run([launcher, "--network-model", "flow", "--print-config"], env=environment()).stdout
for key in ("nic.e2e", "nic.model_pci", "nic.model_pci_commands"):
    if not re.search(rf"^{re.escape(key)} = false\s+# derived: off in the flow model", config, re.M):
        failures.append(f"--print-config under the flow model does not show {key} off, derived")

# Refused, with the key and the value named.
bad = [
    (["--network-model", "flow@1ms,detailed@0.5ms"], "the dates must increase from one phase to the next"),
    (["--network-model", "fast"], "invalid value 'fast' for --network-model"),
    (["--set", "network.model=fast"], "'fast' is not a network model"),
    (["--set", "network.model=flow@soon"], "'soon' in 'flow@soon' is not a date"),
    (["--set", "network.model=flow@0,flow@1ms"], "the model is already flow then"),
    (["--set", "network.switch=sometimes"], "network.switch"),
    (["--set", "network.switch=pcontrol", "--set", "network.model=flow@0,detailed@1ms"],
     "pcontrol switches models at the program's MPI_Pcontrol calls"),
]
for options, message in bad:
    done = run(command(launcher, timeline_program, ranks=2, options=options), env=environment())
    ok = done.returncode != 0 and message in done.stderr
    print(f"{' '.join(options)}: exit status {done.returncode}, {'says so' if ok else 'WRONG: ' + done.stderr[-300:]}")
    if not ok:
        failures.append(f"{' '.join(options)} was not refused with '{message}'")

if failures:
    print("FAIL:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("flow model: every date follows the model's formula")
