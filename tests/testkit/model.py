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
    def __init__(self, path=None):
        """The built-in default platform, overridden by the platform file at `path`."""
        spec = tomllib.loads((PLATFORMS / "default.toml").read_text())
        if path:
            for section, values in tomllib.loads(Path(path).read_text()).items():
                spec.setdefault(section, {}).update(values)
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

    # ---- Timelines of single operations (appendix §5 of the model), all from the call.
    PIO_MATCHING = 408
    E2E_CONTEXT = 64
    CPU_AFTER_PIO = 200e-9
    TX_AFTER_PUT_NO_DMA = 200e-9
    ACK = 32
    GET_REQUEST = 64

    def event_delivery(self):
        """Event write over PCIe, then the zero-byte hand-over to the rank's core."""
        return self.pci(EVENT) + self.pci_latency()

    def put_timeline(self, size, volatile=False):
        """Dates of return, SEND, PUT (target) and ACK of a PtlPut with PTL_ACK_REQ."""
        pio = volatile and INLINE_MATCHING < size <= self.PIO_MATCHING
        returned = (self.CPU_AFTER_PIO if pio else 0) + self.pci(COMMAND)
        tx = returned + SEND_PREPARATION
        if not pio and size > INLINE_MATCHING:  # DMA
            dma_start = tx + self.pci(DMA_REQUEST)
            network_start = dma_start + self.first_packet_wait(size)
            tx_done = max(network_start, dma_start + self.pci(size - INLINE_MATCHING))
        else:
            network_start = tx
            tx_done = tx + self.TX_AFTER_PUT_NO_DMA
        put = network_start + self.network(size) + self.event_delivery()
        ack_arrival = put - self.pci_latency() + SEND_PREPARATION + self.network(self.ACK)
        if size <= self.E2E_CONTEXT:
            send = tx_done + self.event_delivery()
            ack = ack_arrival + self.event_delivery()
        else:  # SEND comes with the ACK, just before it
            send = ack_arrival + self.event_delivery()
            ack = send + self.pci(EVENT)
        return {"return": returned, "SEND": send, "PUT": put, "ACK": ack}

    def get_timeline(self, size, fetch_atomic=False):
        """Dates of return, REPLY and GET (target, with E2E: after the BXI ACK). A
        FetchAtomic (inline operand) reaches the target like a Put and is answered like a
        Get; its SEND comes from the TX as for a small Put, its target event is
        FETCH_ATOMIC."""
        returned = self.pci(COMMAND)
        if fetch_atomic:
            at_target = returned + SEND_PREPARATION + self.network(size)
        else:
            at_target = returned + SEND_PREPARATION + self.network(self.GET_REQUEST)
        response_start = at_target + SEND_PREPARATION + self.pci(DMA_REQUEST) + self.first_packet_wait(size)
        at_initiator = response_start + self.network(size)
        replied = at_initiator + self.first_packet_wait(size)
        reply = replied + self.event_delivery()
        get = replied + SEND_PREPARATION + self.network(self.ACK) + self.event_delivery()
        if fetch_atomic:
            send = returned + SEND_PREPARATION + self.TX_AFTER_PUT_NO_DMA + self.event_delivery()
            return {"return": returned, "SEND": send, "REPLY": reply, "FETCH_ATOMIC": get}
        return {"return": returned, "REPLY": reply, "GET": get}

    def atomic_timeline(self, size):
        """Dates of return, SEND, ATOMIC (target) and ACK of an inline PtlAtomic."""
        returned = self.pci(COMMAND)
        tx = returned + SEND_PREPARATION
        send = tx + self.TX_AFTER_PUT_NO_DMA + self.event_delivery()
        arrival = tx + self.network(size)
        ack_queued = arrival + self.first_packet_wait(size)
        atomic = ack_queued + self.event_delivery()
        ack = ack_queued + SEND_PREPARATION + self.network(self.ACK) + self.event_delivery()
        return {"return": returned, "SEND": send, "ATOMIC": atomic, "ACK": ack}


    # ---- The same timelines with the model's knobs changed (appendix §6, §7.2, §9.1).
    def put_timeline_quick_acks(self, size):
        """Quick ACKs: the target's RX writes the ACK event over the initiator's PCIe and
        hands it over across the network: no PTL ACK message."""
        timeline = self.put_timeline(size)
        put_written = timeline["PUT"] - self.pci_latency()
        across = 2 * self.bxi["link_latency"] + self.pci_latency()  # target NIC to initiator core
        if size <= self.E2E_CONTEXT:
            timeline["ACK"] = put_written + self.pci(EVENT) + across
        else:  # SEND comes from the target's RX too, just before the ACK
            timeline["SEND"] = put_written + self.pci(EVENT) + across
            timeline["ACK"] = put_written + 2 * self.pci(EVENT) + across
        return timeline

    def put_timeline_no_pci(self, size):
        """model_pci off: no command, DMA, payload or event transfer on PCIe; events still
        reach the core after the route's latency."""
        tx = SEND_PREPARATION
        put = tx + self.network(size) + self.pci_latency()
        ack = put - self.pci_latency() + SEND_PREPARATION + self.network(self.ACK) + self.pci_latency()
        send = tx + self.TX_AFTER_PUT_NO_DMA + self.pci_latency() if size <= self.E2E_CONTEXT else ack
        return {"return": 0.0, "SEND": send, "PUT": put, "ACK": ack}

    def get_event_without_e2e(self, size, fetch_atomic=False):
        """E2E off: the target's GET (FETCH_ATOMIC) event comes once its TX has read the
        response by DMA, not after a BXI ACK."""
        returned = self.pci(COMMAND)
        request = self.network(size) if fetch_atomic else self.network(self.GET_REQUEST)
        at_target = returned + SEND_PREPARATION + request
        read_start = at_target + SEND_PREPARATION + self.pci(DMA_REQUEST)
        return read_start + self.pci(size) + self.event_delivery()
