#!/usr/bin/env python3
"""Service virtual networks per rank (--service-ranks): an 8-byte Put measured while
another rank of its node floods the NIC with 1 MiB Puts (service_vn.c). On the compute
VNs the probe waits behind the flood in the node's TX engine; on the service VNs it has
engines of its own and costs what it costs alone (tests/testkit/model.py), give or
take what sharing the PCIe bus and the links with the flood adds (bound: 2 %)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/: testkit
from testkit.launch import launch  # noqa: E402
from testkit.model import Platform  # noqa: E402

launcher, program = sys.argv[1], sys.argv[2]


def probe(extra):
    run = launch(launcher, program, ranks=4, options=("--ppn", 2, *extra))
    found = re.search(r"probe_ack_ns=(\d+)", run.stdout)
    if run.returncode != 0 or not found:
        sys.exit(f"service_vn {extra} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    return int(found.group(1))


alone = Platform().put_timeline(8)["ACK"] * 1e9
compute = probe([])
service = probe(["--service-ranks", "1"])
print(f"8-byte Put, ACK after: alone (model) {alone:.1f} ns, behind the flood on the compute VNs {compute} ns, "
      f"on the service VNs {service} ns")
failures = []
if compute < 10 * alone:
    failures.append(f"on the compute VNs the probe should wait behind the flood: {compute} ns < 10 x {alone:.1f}")
if abs(service - alone) > 0.02 * alone:
    failures.append(f"on the service VNs the probe should cost what it costs alone: {service} ns vs {alone:.1f}")
if failures:
    sys.exit("\n".join(failures))
print("the service VNs keep a rank's traffic out of the compute queues")
