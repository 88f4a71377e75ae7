#!/usr/bin/env python3
"""A small Get right after a completed 1 MiB Put between the same two nodes (get_after_put.c,
platforms/quito.toml, E2E on), against the model (tests/testkit/model.py).

The Put's ACK reaches the initiator before the target has written the Put's payload: the
target's RX engine writes the PUT event, queues the ACK, waits for the last packet and
then writes the payload, and it is busy until that write is done (appendix §5.1; the
reference simulator does the same). A Get issued when the ACK arrives therefore reaches
the target's RX engine before it is free, and is handled only once the 1 MiB write ends:
its REPLY and GET come about 91 us later than on idle NICs, whatever its size. Alone, the
Gets follow the single-Get timeline."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit import steps as timeline_steps  # noqa: E402
from testkit.launch import launch  # noqa: E402
from testkit.model import SEND_PREPARATION, Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]
platform = Path(__file__).resolve().parents[3] / "platforms" / "quito.toml"
run = launch(launcher, program, options=("--platform", platform))
if run.returncode != 0:
    sys.exit(f"get_after_put failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
steps = timeline_steps.parse(run.stdout)

p = Platform(platform)
M = 1 << 20
put = p.put_timeline(M)
# The target's RX engine is free once the Put's payload is written: end of the PUT event
# write, last-packet wait, then the 1 MiB write.
rx_free = put["PUT"] - p.pci_latency() + p.first_packet_wait(M) + p.pci(M)
expected = {}
for size in (8, 512):
    alone = p.get_timeline(size)
    expected[f"get{size}"] = alone
    # The Get is called when the Put's ACK arrives; its request reaches the target at
    # `at_target` after the call, and waits there for the RX engine.
    at_target = alone["return"] + SEND_PREPARATION + p.network(p.GET_REQUEST)
    wait = max(0.0, rx_free - put["ACK"] - at_target)
    after = {step: date + (0.0 if step == "return" else wait) for step, date in alone.items()}
    after.update({"put_call": -put["ACK"], "put_PUT": put["PUT"] - put["ACK"], "put_SEND": put["SEND"] - put["ACK"],
                  "put_ACK": 0.0})
    expected[f"after1M_get{size}"] = after

failures = timeline_steps.compare(expected, steps)
if failures:
    sys.exit("\n".join(failures))
print("a Get right after a 1 MiB Put waits for the target's payload write, as the model says")
