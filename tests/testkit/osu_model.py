"""OSU 5.3's point-to-point programs beyond osu_latency (model.MtlPingPong) over Open MPI's
MTL portals4 under --cpu-model zero, predicted from the model's formulas (testkit.model,
docs/model.md), never from a run: the windowed ones (osu_bw, osu_mbw_mr, osu_bibw) as a
pipeline of the stages a message goes through (WindowedBandwidth), osu_multi_lat as
MtlPingPong's messages between Open MPI's barriers and reduces (MultiLatency).
docs/openmpi.md, "The OSU curves", traces each stage in a run's timeline.

The windowed programs:

A window is 64 MPI_Isend from rank 0 (node 0), which then waits for them all and receives
rank 1's 4-byte reply; rank 1 (node 1) has posted its 64 MPI_Irecv before the window's
first message arrives and replies once they have all completed. Each message goes through
these stages, each a queue served one message at a time, in order:

1. rank 0's core: the MPI_Isend's commands (above the MTL's short limit a PtlMEAppend for
   the Get entry, then the PtlPut), each one PCIe write of 64 B; a PtlPut first takes one
   of the NI's command-queue slots, which the TX engine frees when it starts the command;
2. node 0's TX engine: send preparation, then inline (up to 8 B: the network send, then
   200 ns) or DMA (a DMA request, the first-packet wait, the network send, then the end of
   the payload's DMA read), then up to the 64-byte E2E context the SEND event it writes;
3. the BXI links: the route's latency, then the bytes; messages in their bandwidth phase
   share the link equally (SimGrid's max-min sharing, each at bandwidth / 1.05 / n), and
   reach node 1's RX engine in the order they were sent; PCIe transfers (DMA reads,
   payload writes) share their node's bus the same way (Transfers);
4. node 1's RX engine: the PUT event write, the ACK queued, the last-packet wait, the
   payload write;
5. node 1's response TX engine: each PTL ACK is a blocking network send: the engine waits
   for the ACK to reach node 0 (the route's latency included), then 200 ns
   (tx_after_ptl_ack), so that small messages' windows are paced by it (1205 ns a message);
6. node 0's response RX: the ACK event (above the E2E context, the SEND event first),
   delivered to rank 0's core.

Rank 0's MPI_Waitall ends with the last ACK event; above the short limit each ACK is
followed by the Get entry's PtlMEUnlink, and after the last one the progress loop's empty
poll follows a Portals call, so it waits a polling step (the reply, already landed in an
overflow block, writes no event) unless the gate's stall rule ends it first
(WindowedBandwidth.stall). Its MPI_Recv then claims the reply (an append and its
PUT_OVERFLOW event). The next window starts there; node 1's RX may still be writing the
last payload, which the next window's first message waits for."""
import heapq
import itertools
from collections import Counter

from .model import (COMMAND, CROSS_TRAFFIC, DMA_REQUEST, EVENT, INLINE_MATCHING, MTL_SHORT_LIMIT, POLLING_STEP,
                    SEND_PREPARATION, MtlPingPong)

WINDOW = 64
COMMAND_QUEUE_DEPTH = 16  # nic.command_queue_depth
TX_AFTER_PTL_ACK = 200e-9  # nic.timings.tx_after_ptl_ack
REPLY = 4  # osu_bw's closing message


class Transfers:
    """Dated actions and transfers that share their resource as SimGrid's max-min shares a
    link between flows of equal weight: the n transfers in their bandwidth phase on one
    resource each move at rate(resource, n) bytes per second. Actions may start more."""

    def __init__(self, rate):
        self.rate = rate
        self.now = 0.0
        self.timers = []  # (date, order of scheduling: actions of one date run in it, action)
        self.order = itertools.count()
        self.flows = []  # [resource, bytes left, action called with the end date]

    def at(self, date, action):
        heapq.heappush(self.timers, (date, next(self.order), action))

    def transfer(self, date, resource, size, action):
        """`size` bytes on `resource` from `date` (the end of the route's latency)."""
        self.at(date, lambda: self.flows.append([resource, float(size), action]))

    def run(self):
        while self.timers or self.flows:
            count = Counter(flow[0] for flow in self.flows)
            rates = [self.rate(flow[0], count[flow[0]]) for flow in self.flows]
            date = min([self.now + flow[1] / rate for flow, rate in zip(self.flows, rates)]
                       + ([self.timers[0][0]] if self.timers else []))
            for flow, rate in zip(self.flows, rates):
                flow[1] -= rate * (date - self.now)
            self.now = date
            ended = [flow for flow in self.flows if flow[1] <= 1e-3]  # bytes: rounding only
            self.flows = [flow for flow in self.flows if flow[1] > 1e-3]
            for flow in ended:
                flow[2](date)
            while self.timers and self.timers[0][0] <= date:
                heapq.heappop(self.timers)[2]()


class WindowedBandwidth:
    """osu_bw's (and osu_mbw_mr's, one pair, whose barrier before the first timed window
    is left out: within 1 % at 10 windows) and osu_bibw's windows, from the stages above."""

    def __init__(self, platform):
        self.p = platform
        self.command = platform.pci(COMMAND)
        self.event = platform.pci(EVENT)
        self.latency = 2 * platform.bxi["link_latency"]
        self.capacity = platform.bxi["link_bandwidth"] / CROSS_TRAFFIC

    def rates(self, directions):
        """Each resource's rate per transfer when n share it. The BXI links carry both
        directions: a second stream, at the same dates, halves this one's share. A node's
        PCIe bus: a transfer alone gets pci()'s rate (the limiter's 11.1 GB/s), two share
        the bus (15.75 GB/s / 1.05). One way, DMA reads (node 0) and payload writes (node 1)
        are on different nodes; both ways, each node does both."""
        limiter, bus = self.p.pcie["limiter_bandwidth"], self.p.pcie["shared_bandwidth"] / CROSS_TRAFFIC

        def rate(resource, n):
            if resource == "link":
                return self.capacity / directions / n
            return min(limiter, bus / n)
        return rate

    def stream(self, size, start, rx_free, directions=1):
        """A window's 64 Puts from rank 0's first MPI_Isend at `start`, node 1's RX engine busy
        until `rx_free`; with 2 `directions` the same stream runs from node 1 to node 0 at
        the same dates, its flows sharing the same links, and each node's PCIe bus carries
        its DMA reads and its payload writes. Returns (when rank 0 has seen the last ACK and,
        above the short limit, unlinked its Get entry; when rank 1 has seen the last PUT
        event; node 1's RX free)."""
        long = size > MTL_SHORT_LIMIT
        sim = Transfers(self.rates(directions))
        reads, writes = ("pcie", "pcie") if directions == 2 else ("node 0 pcie", "node 1 pcie")
        after_tx = self.event if size <= self.p.E2E_CONTEXT else 0.0  # the SEND event, written by the TX
        tx_starts, arrivals, written = [], {}, []
        core = [start]
        rx = {"free": rx_free, "busy": False}

        def tx(j, free):
            """Node 0's TX, free at `free`, on the next Put once its command is in."""
            if j == WINDOW:
                return
            core[0] += self.command * (2 if long else 1)  # above the short limit the Get entry's append first
            if j >= COMMAND_QUEUE_DEPTH:
                core[0] = max(core[0], tx_starts[j - COMMAND_QUEUE_DEPTH] + self.command)  # a free slot
            began = max(core[0], free)
            tx_starts.append(began)
            sent = began + SEND_PREPARATION
            if size <= INLINE_MATCHING:
                sim.transfer(sent + self.latency, "link", size, lambda end: arrive(j, end))
                done = sent + self.p.TX_AFTER_PUT_NO_DMA + after_tx
                sim.at(done, lambda: tx(j + 1, done))
                return
            requested = sent + self.p.pci(DMA_REQUEST)
            sent = requested + self.p.first_packet_wait(size)
            sim.transfer(sent + self.latency, "link", size, lambda end: arrive(j, end))

            def read(end):  # the rest of the payload's DMA read is over
                done = max(end, sent) + after_tx
                sim.at(done, lambda: tx(j + 1, done))
            sim.transfer(requested + self.p.pci_latency(), reads, size - INLINE_MATCHING, read)

        def arrive(j, end):  # messages reach the RX in sending order
            arrivals[j] = end
            receive()

        def receive():
            """Node 1's RX: the PUT event (the ACK is queued), the last-packet wait, the
            payload write."""
            j = len(written)
            if rx["busy"] or j not in arrivals:
                return
            rx["busy"] = True
            written.append(max(arrivals[j], rx["free"]) + self.event)

            def payload(end):
                rx["free"], rx["busy"] = end, False
                receive()
            sim.transfer(written[-1] + self.p.first_packet_wait(size) + self.p.pci_latency(), writes, size, payload)

        sim.at(start, lambda: tx(0, start))
        sim.run()
        ack_free, seen = start, start
        for date in written:
            at_node0 = max(date, ack_free) + SEND_PREPARATION + self.p.network(self.p.ACK)
            ack_free = at_node0 + TX_AFTER_PTL_ACK
            events = 1 if size <= self.p.E2E_CONTEXT else 2  # SEND comes with the ACK above the context
            acked = at_node0 + events * self.event + self.p.pci_latency()
            seen = max(seen, acked) + (self.command if long else 0)  # the Get entry's PtlMEUnlink
        return seen, written[-1] + self.p.pci_latency(), rx["free"]

    def window(self, size, start, rx_free):
        """One window of osu_bw from rank 0's first MPI_Isend at `start`, node 1's RX engine
        busy until `rx_free`. Returns (the end of rank 0's MPI_Recv of the reply, node 1's RX
        free)."""
        seen, received, rx_free = self.stream(size, start, rx_free)
        if size > MTL_SHORT_LIMIT:
            seen = min(seen + POLLING_STEP, self.stall(seen, rx_free, received))
        return seen + self.command + self.event, rx_free  # MPI_Recv claims the landed reply

    def stall(self, polling, rx_free, received):
        """When rank 0's last empty poll (from `polling`) is ended by the gate's stall rule
        (docs/model.md, Polling): every rank waits on an empty poll's deadline and nothing
        is under way, here once node 1's RX has written the last payload (`rx_free`) and
        rank 1 is between two of its MPI_Irecv's PtlMEAppend. Rank 1 saw its last message
        at `received`, replied (an MPI_Send of 4 B whose Put lands in rank 0's overflow
        list: its ACK one event write sooner), then posts its 64 receives: above the short
        limit each one an append that writes a LINK event, then an empty poll that waits a
        polling step, since nothing arrives for rank 1 until the next window."""
        append = self.command + self.event
        posting = received + self.p.put_timeline(REPLY)["ACK"] - self.event
        quiet = max(polling, rx_free)
        for k in range(WINDOW):
            poll = posting + k * (append + POLLING_STEP) + append
            if quiet < poll:
                return poll
            if quiet < poll + POLLING_STEP:
                return quiet
        return quiet  # rank 1 waits in its MPI_Waitall

    def bidirectional_window(self, size, start, rx_free):
        """One window of osu_bibw from both ranks' first MPI_Irecv at `start` (the two ranks
        do the same at the same dates), each node's RX busy until `rx_free`. Returns (the end
        of both ranks' second MPI_Waitall, each node's RX free).

        Each rank posts its 64 receives, then sends its 64 messages, waits for its sends,
        then for its receives (done by then: a PUT event comes before its ACK reaches the
        other side). Above the short limit each receive is an append that writes a LINK
        event, then an empty poll, which the stall rule ends once both ranks poll and the
        previous window's payload writes are over (else a polling step). The two streams'
        flows share the BXI links: SimGrid's links are shared by both directions, and each
        flow loads them with bandwidth x 1.05 (its route and 5 % on the way back)."""
        long = size > MTL_SHORT_LIMIT
        posted = start
        for _ in range(WINDOW):
            posted += self.command + (self.event if long else 0)
            if long and posted < rx_free:
                posted = min(posted + POLLING_STEP, rx_free)
        seen, _, rx_free = self.stream(size, posted, rx_free, directions=2)
        if long:  # the last unlink's empty poll, until both ranks poll with nothing under way
            seen = min(seen + POLLING_STEP, max(seen, rx_free))
        return seen, rx_free

    def run(self, size, iterations, skip, bidirectional=False):
        """osu_bw's (osu_bibw's) figure for `size`, in MB/s: the timed windows' bytes (both
        ways) over their time."""
        window = self.bidirectional_window if bidirectional else self.window
        now, rx_free, start = 0.0, 0.0, 0.0
        for i in range(skip + iterations):
            if i == skip:
                start = now
            now, rx_free = window(size, now, rx_free)
        return size * WINDOW * (2 if bidirectional else 1) * iterations / (now - start) / 1e6


class MultiLatency:
    """osu_multi_lat on one pair: osu_latency's ping-pong, timed by each rank from the end of
    its warm-up, through an MPI_Barrier, to the end of its last round trip, both ranks'
    figures averaged; an MPI_Reduce after each size and an MPI_Barrier before the next.
    Each message is MtlPingPong's, and the collectives are Open MPI's two-process forms, as
    the timeline shows them:
    - MPI_Barrier: each rank appends a 0-byte receive, puts 0 bytes to the other, and leaves
      once its Put is acknowledged and the other's message is received; the later rank's
      append claims the earlier rank's message when it has already landed;
    - MPI_Reduce to rank 0: rank 0 receives rank 1's 8 bytes.
    Every size starts where the previous one left the ranks. What the ping-pong alone does
    not have:
    - after the warm-up, rank 0 goes into the barrier: the next message for rank 1, which
      ends its last empty poll (MtlPingPong.one_way), is the barrier's 0-byte Put, landed
      in an overflow entry;
    - after the timed loop, rank 0 goes into the reduce, where it only receives: rank 1's
      last empty poll ends by the gate's stall rule (docs/model.md, Polling) once rank 0
      polls too, after its append, and node 0's RX has written the last payload;
    - node 0's RX writes a message's payload after the PUT event that ends rank 0's
      receive: the barrier's and the reduce's messages from rank 1 wait for it (378.6 us
      at 4 MiB)."""

    REDUCED = 8  # one MPI_DOUBLE

    def __init__(self, platform):
        self.p = platform
        self.pingpong = MtlPingPong(platform)
        self.command = platform.pci(COMMAND)

    def message(self, sent, posted, size, rx_free=0.0):
        """(receive done, whether the receive was posted first, send done) of a short
        message sent at `sent` to a receive called at `posted`, the target's RX busy until
        `rx_free`: a message that arrives earlier waits, and so does all that follows."""
        waits = max(0.0, rx_free - (sent + self.pingpong.arrival(size)))
        return self.pingpong.one_way(sent + waits, posted, size, None)

    def rx_free(self, received, size, expected):
        """When node 0's RX has written the payload of the message whose PUT event ended rank
        0's receive at `received` (a message landed in an overflow entry leaves nothing to
        wait for once claimed)."""
        if not expected:
            return received
        written = received - self.p.pci_latency()
        return written + self.p.first_packet_wait(size) + self.p.pci(size)

    def barrier(self, entered, rx_free0=0.0):
        """Both ranks' exits from an MPI_Barrier they enter at `entered` (rank 0, rank 1),
        node 0's RX busy until `rx_free0`."""
        first = 0 if entered[0] <= entered[1] else 1
        second = 1 - first
        rx_free = (0.0, rx_free0)  # of the node each rank's message goes to
        received, done = {}, {}
        received[second], expected, done[first] = self.message(entered[first] + self.command, entered[second], 0,
                                                               rx_free[first])
        # The second's append returns once it has claimed the first's message if that
        # landed before the append linked (the receive's end is that return), else at once.
        appended = entered[second] + self.command if expected else received[second]
        received[first], _, done[second] = self.message(appended, entered[first], 0, rx_free[second])
        return tuple(max(done[r], received[r]) for r in (0, 1))

    def reduce(self, entered, rx_free0):
        received, _, done = self.message(entered[1], entered[0], self.REDUCED, rx_free0)
        return received, done

    def run(self, sizes, iterations, skip):
        """osu_multi_lat's figure of each size in `sizes` (its order: 0, 1, 2, 4 ...), in
        seconds: each rank's (end - start) / (2 iterations), averaged."""
        def barrier_put(received, _expected):  # rank 0's append, then its 0-byte Put
            return received + self.command + self.pingpong.arrival(0)

        ranks = self.barrier((0.0, 0.0))  # main's MPI_Barrier after MPI_Init
        figures = {}
        for size in sizes:
            def quiet(received, expected):  # rank 0 polls after its append; node 0's RX is done
                return max(received + self.command, self.rx_free(received, size, expected))

            ranks = self.barrier(ranks)
            start0, start1, paths = self.pingpong.pingpong(size, ranks[0], ranks[1], skip, barrier_put)
            ranks = self.barrier((start0, start1), self.rx_free(start0, size, paths[-1][1]))
            end0, end1, paths = self.pingpong.pingpong(size, ranks[0], ranks[1], iterations, quiet)
            figures[size] = ((end0 - start0) + (end1 - start1)) / 2 / (2 * iterations)
            ranks = self.reduce((end0, end1), self.rx_free(end0, size, paths[-1][1]))
        return figures
