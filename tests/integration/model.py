"""The BXI model's formulas (docs/model.md), for integration tests to derive expected
simulated times from the platform parameters instead of pasting numbers from a run."""
import tomllib
from pathlib import Path

PLATFORMS = Path(__file__).resolve().parents[2] / "platforms"

# Fixed NIC parameters (docs/model.md, "NIC timings").
COMMAND = 64
DMA_REQUEST = 64
EVENT = 96
INLINE_MATCHING = 8
SEND_PREPARATION = 2e-9
PCI_HEURISTIC_LATENCY = 200e-9
PCI_HEURISTIC_BANDWIDTH = 15.75e9
PACKET = 512
CROSS_TRAFFIC = 1.05  # SimGrid's reverse-route load: a lone flow on a shared link gets bw / 1.05


class Platform:
    def __init__(self, name="default"):
        spec = tomllib.loads((PLATFORMS / f"{name}.toml").read_text())
        self.pcie = spec["pcie"]
        self.bxi = spec["bxi"]

    def pci(self, size):
        """A lone transfer between a node's cores and its NIC: two links in series."""
        rate = min(self.pcie["limiter_bandwidth"], self.pcie["shared_bandwidth"] / CROSS_TRAFFIC)
        return self.pcie["limiter_latency"] + self.pcie["shared_latency"] + size / rate

    def pci_latency(self):
        return self.pcie["limiter_latency"] + self.pcie["shared_latency"]

    def network(self, size):
        """NIC to NIC through one switch: the two BXI links."""
        return 2 * self.bxi["link_latency"] + size * CROSS_TRAFFIC / self.bxi["link_bandwidth"]

    @staticmethod
    def first_packet_wait(size):
        return PCI_HEURISTIC_LATENCY + min(size, PACKET) / PCI_HEURISTIC_BANDWIDTH

    def put_to_target_event(self, size):
        """From the PtlPut call to the PUT event seen by the target rank (matching NI,
        non-volatile MD, E2E on): command write, TX, [DMA request + first packet],
        network, event write, delivery to the core."""
        t = self.pci(COMMAND) + SEND_PREPARATION
        if size > INLINE_MATCHING:
            t += self.pci(DMA_REQUEST) + self.first_packet_wait(size)
        return t + self.network(size) + self.pci(EVENT) + self.pci_latency()
