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
        self.flow = spec["flow"]

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


# ---- Open MPI's MTL portals4 (4.1.4, its defaults) over this model: docs/openmpi.md,
# "The OSU curves". What each message costs, from the MTL's source: up to the short limit
# one Put with an ACK; above it a Get entry on the sender (PtlMEAppend), then one Put of
# the whole message (the eager long protocol). A message that finds no receive posted
# lands in an overflow entry: a short one in a block (the receive's PtlMEAppend claims
# it), a long one truncated to nothing in the long overflow entry (the receive then reads
# it with a Get).
MTL_SHORT_LIMIT = 2048
POLLING_STEP = 4e-6  # the first polling step (docs/model.md, "Polling")


class FlowTimeline:
    """The flow model's dates of one operation, from the call (docs/network-models.md, "The flow
    model"): the call costs flow.command_time; each message waits flow.latency (up to
    flow.small_size, flow.small_latency) and crosses
    the network at the links' bandwidth times flow.bandwidth_factor; a NIC that takes in
    one message at a time (flow.gap apart) is free here, each operation running alone; an
    event reaches the rank's core after the PCIe hand-over. A target's GET or FETCH_ATOMIC
    event is written once its response is sent."""

    def __init__(self, platform):
        self.p = platform
        self.f = platform.flow

    def latency(self, size):
        return self.f["small_latency"] if size <= self.f["small_size"] else self.f["latency"]

    def one_way(self, size):
        return self.latency(size) + self.p.network(size / self.f["bandwidth_factor"])

    def put(self, size, target_event="PUT"):
        call = self.f["command_time"]
        there = call + self.one_way(size)
        back = there + self.one_way(Platform.ACK)
        handover = self.p.pci_latency()
        return {"return": call, target_event: there + handover, "SEND": back + handover, "ACK": back + handover}

    def get(self, size, fetch=False):
        call = self.f["command_time"]
        there = call + self.one_way(size if fetch else Platform.GET_REQUEST)
        handover = self.p.pci_latency()
        dates = {"return": call, "FETCH_ATOMIC" if fetch else "GET": there + self.latency(size) + handover,
                 "REPLY": there + self.one_way(size) + handover}
        if fetch:
            dates["SEND"] = dates["REPLY"]
        return dates


class MtlPingPong:
    """Simulated dates of Open MPI's blocking ping-pong (MPI_Send then MPI_Recv on one rank,
    MPI_Recv then MPI_Send on the other, as osu_latency does) under --cpu-model zero,
    derived from the model's formulas and the MTL's protocol, not from a run.

    The rules (each traced in a run's timeline, docs/openmpi.md):
    - a Portals call that reaches the NIC takes its command's PCIe write (pci(COMMAND));
    - a PtlMEAppend that claims an unexpected header, or whose entry writes a LINK event,
      returns once that event is written (pci(EVENT)), and the rank has it then;
    - a message that lands in an overflow entry writes no event, so its ACK leaves one
      event write earlier than a matched Put's;
    - MPI_Send returns on the ACK (short, or long matched in the priority list) or on the
      Get's GET event (long, unexpected); a long send then unlinks its Get entry
      (PtlMEUnlink, a command) and the progress loop's next empty poll waits a polling
      step, or until something arrives for the rank (its peer's next message)."""

    # An event written inside the rank's own call (PtlMEAppend's PUT_OVERFLOW or LINK) is
    # the rank's once its PCIe write ends: it does not pay the NIC-to-core hand-over
    # (pci_latency()) that docs/model.md gives every event. The simulator does so today
    # (docs/openmpi.md, "The OSU curves"); set to platform.pci_latency() once it does not.
    OWN_CALL_EVENT_HANDOVER = 0.0

    def __init__(self, platform):
        self.p = platform
        self.command = platform.pci(COMMAND)
        self.event = platform.pci(EVENT)
        self.own_event = self.event + self.OWN_CALL_EVENT_HANDOVER

    def arrival(self, size):
        """From the PtlPut call to the message's arrival at the target NIC."""
        return self.p.put_timeline(size)["PUT"] - self.p.event_delivery()

    def one_way(self, sent, posted, size, peer_next_arrival):
        """A message of `size` sent at `sent` (the MPI_Send call) to a rank whose MPI_Recv
        starts at `posted`. Returns (receive done, whether the message was expected, send
        done given when the peer's next message would reach the sender: a function of the
        receive's end and of whether the message was expected)."""
        long = size > MTL_SHORT_LIMIT
        put = sent + (self.command if long else 0)  # the Get entry's append comes first
        timeline = self.p.put_timeline(size)
        arrival = put + self.arrival(size)
        linked = posted + self.command
        expected = linked <= arrival
        if expected:
            received = max(put + timeline["PUT"], linked + (self.own_event if long else 0))
            acked = put + timeline["ACK"]
            done = acked
        else:
            claimed = max(linked, arrival) + self.own_event  # the append's PUT_OVERFLOW event
            acked = put + timeline["ACK"] - self.event
            if long:
                get = self.p.get_timeline(size)
                received = claimed + get["REPLY"]
                done = max(acked, claimed + get["GET"])
            else:
                received = claimed
                done = acked
        if long:  # PtlMEUnlink of the Get entry, then the empty poll's step
            unlinked = done + self.command
            done = min(unlinked + POLLING_STEP, max(unlinked, peer_next_arrival(received, expected)))
        return received, expected, done

    def pingpong(self, size, t0, posted1, iterations, after=None):
        """`iterations` round trips from rank 0's MPI_Send called at `t0`, rank 1's first
        MPI_Recv called at `posted1`. Returns (the end of rank 0's last MPI_Recv, of rank 1's
        last MPI_Send, and per iteration whether each message, to rank 1 and back to rank 0,
        found its receive posted: expected). `after`: what ends rank 1's last empty poll
        (a function of rank 0's last receive, as `one_way`'s peer_next_arrival), when rank
        0 does something else than sending it the next message."""
        long = size > MTL_SHORT_LIMIT

        def next_arrival(received, _expected):
            return received + (self.command if long else 0) + self.arrival(size)

        paths = []
        for i in range(iterations):
            r1, e1, s0 = self.one_way(t0, posted1, size, next_arrival)
            last = after if after and i == iterations - 1 else next_arrival
            r0, e0, s1 = self.one_way(r1, s0, size, last)
            paths.append((e1, e0))
            t0, posted1 = r0, s1
        return t0, posted1, paths

    def run(self, size, iterations, skip):
        """osu_latency's figure, in seconds: (end - start) / (2 iterations), timed from the
        first iteration after `skip`, rank 1's first receive posted before rank 0's first
        send (it waits in MPI_Recv from the start). Also, per iteration, whether each
        message (to rank 1, back to rank 0) found its receive posted (expected)."""
        start, posted1, warm_up = self.pingpong(size, 0.0, -1.0, skip)
        end, _, paths = self.pingpong(size, start, posted1, iterations)
        return (end - start) / (2 * iterations), warm_up + paths
