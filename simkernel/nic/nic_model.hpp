// The BXI NIC model (docs/model.md): per node, TX and RX engines per virtual network,
// command queues fed over PCIe, inline/PIO/DMA paths, event writes, BXI end-to-end ACKs.
#pragma once

#include <portals4.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <simgrid/s4u.hpp>

#include "nic/e2e.hpp"
#include "nic/lone_transfers.hpp"
#include "observation/trace.hpp"
#include "platform/platform.hpp"
#include "portals/portals_state.hpp"

namespace s4bxi::sim {

enum class VirtualNetwork : uint32_t { ServiceRequest = 0, ComputeRequest = 1, ServiceResponse = 2, ComputeResponse = 3 };

enum class MessageType { Put, Get, Atomic, FetchAtomic, PtlAck, E2eAck, GetResponse, FetchAtomicResponse };
enum class TransferState { Created, Received, Answered, Finished };

// One Portals data operation, shared by its initiator and its target: only a simulation
// can afford that, and it keeps the model's bookkeeping exact.
struct Transfer {
    MessageType kind = MessageType::Put;
    TransferState state = TransferState::Created;
    RankPortals* initiator = nullptr;
    uint32_t initiator_nid = 0;
    uint32_t initiator_pid = 0;
    // Its rank in the map of the logical NI it is matched on (set by the matching).
    uint32_t initiator_rank = 0;
    uint32_t ni_index = 0;
    bool matching = true;
    MemoryDescriptor md;      // copies: releasing the MD later is harmless
    MemoryDescriptor get_md;  // FetchAtomic/Swap destination
    uint64_t local_offset = 0;
    uint64_t local_get_offset = 0;
    uint64_t length = 0;
    uint32_t ack_req = PTL_NO_ACK_REQ;
    uint32_t target_nid = 0;
    uint32_t target_pid = 0;
    uint32_t pt_index = 0;
    uint64_t match_bits = 0;
    uint64_t remote_offset = 0;
    uint64_t user_ptr = 0;
    uint64_t hdr_data = 0;
    uint32_t atomic_op = 0;
    uint32_t atomic_type = 0;
    VirtualNetwork request_vn = VirtualNetwork::ComputeRequest;
    bool pio = false;
    bool send_emitted = false;
    // The payload (Put) or operand (Atomic), read from the initiator when the command is
    // issued if the program may reuse its buffer before the message lands (SEND comes
    // first, or the MD is volatile); otherwise read from the initiator's memory when it
    // lands, as the NIC reads it again for a retransmission (payload_at_delivery).
    std::unique_ptr<unsigned char[]> payload;
    bool payload_readable = true;
    bool payload_at_delivery = false;
    bool triggered = false;  // issued by the NIC itself: holds no command-queue slot
    bool has_compare = false;         // PtlSwap's compare / mask operand
    unsigned char compare[32] = {};
    // Filled by the target.
    ptl_ni_fail_t fail = PTL_NI_OK;
    uint64_t mlength = 0;
    uint64_t offset_used = 0;
    bool matched = false;
    ptl_list_t list = PTL_PRIORITY_LIST;  // where it matched: the ACK and REPLY tell the initiator
    bool deferred_pending = false;  // GET / FETCH_ATOMIC event waits for the BXI ACK
    RankPortals* target = nullptr;
    uint32_t target_eq = PTL_EQ_NONE;
    ptl_event_t deferred{};
    ListEntryPtr deferred_unlink;  // the entry it consumed: its AUTO_UNLINK comes after it
    // E2E bookkeeping: the request (held by the initiator's node), the PTL ACK or the
    // response (held by the target's).
    E2eRecordPtr request_record;
    E2eRecordPtr response_record;
};
using TransferPtr = std::shared_ptr<Transfer>;

struct Message {
    MessageType type;
    TransferPtr transfer;
    uint64_t size = 0;
    uint32_t source_nid = 0;
    uint32_t destination_nid = 0;
    MessageType acknowledges = MessageType::Put;  // for E2E ACKs
    int retries = 0;                              // 0: first transmission
    double sent_at = 0.0;                         // start of its network transfer (traces)
    bool credit_to_target = false;                // flow-control credits this message holds
    bool credit_to_process = false;
};

// The messages waiting for a NIC engine. They come in three ways: pushed by a sender that
// waited for its own transfer, pushed by a timer when a computed transfer lands
// (lone_transfers.hpp), or through a mailbox (a simulated transfer nobody waits for), taken
// as soon as it arrives by a pump actor of its own, the mailbox's permanent receiver.
// SimGrid takes a message off a mailbox by erasing it from the front of a circular buffer,
// which costs the length of the queue: a NIC busy with earlier messages while thousands
// arrive (a burst of small atomics) paid thousands of reference-count updates per message.
class ArrivalQueue {
public:
    void init();
    // The pump: from then on, every message sent to `mailbox` lands here, after `landed`.
    void pump_from(simgrid::s4u::Mailbox* mailbox, simgrid::s4u::Host* host, const std::string& name,
                   std::function<void(const Message&)> landed = nullptr);
    void push(Message* message);
    Message* pop();  // waits in simulated time for the next message

private:
    std::deque<Message*> messages_;
    simgrid::s4u::SemaphorePtr available_;
};

// A TX command queue: fed over PCIe by 64-byte command writes when commands are
// modelled (the writer waits for its transfer, then queues the command), or straight
// into the ArrivalQueue when they are not. The few commands nobody waits for that cross
// PCIe go through a mailbox and its pump.
class CommandQueue {
public:
    void init(const std::string& name, bool over_pcie);
    void set_consumer(simgrid::s4u::ActorPtr actor);
    void push_blocking(Message* message, uint64_t bytes);  // from a core: a PCIe command write
    void push_detached(Message* message);                  // from the NIC itself: no cost
    void push_from_nic(Message* message) { arrived_.push(message); }  // also from the engine (a timer)
    Message* pop();

private:
    bool over_pcie_ = true;
    simgrid::s4u::Host* nic_host_ = nullptr;  // the consumer's
    simgrid::s4u::Mailbox* mailbox_ = nullptr;  // for commands no writer waits for
    ArrivalQueue arrived_;
};

class Nic {
public:
    Nic(uint32_t nid, NodeHosts hosts, const PlatformSpec& spec);
    void start();

    uint32_t nid() const { return nid_; }
    const NodeHosts& hosts() const { return hosts_; }
    simgrid::s4u::Host* cpu0() const { return hosts_.cores.front(); }
    CommandQueue& tx_queue(VirtualNetwork vn) { return tx_[static_cast<int>(vn)]; }
    // BXI ACKs leave through their own lane: behind a response waiting for an E2E entry,
    // the ACKs that free entries on the peer would wait too (a deadlock between two nodes).
    void send_e2e_ack(Message* ack, VirtualNetwork vn) { e2e_acks_[static_cast<int>(vn)].push_detached(ack); }
    simgrid::s4u::Mailbox* rx_mailbox(VirtualNetwork vn) { return rx_[static_cast<int>(vn)]; }
    std::vector<NetworkInterface*>& interfaces() { return interfaces_; }
    E2eTracker& e2e() { return e2e_; }

private:
    void tx_loop(VirtualNetwork vn);
    void e2e_ack_loop(VirtualNetwork vn);
    void rx_loop(VirtualNetwork vn);

    void tx_put_like(Message* message, VirtualNetwork vn);
    void tx_get(Message* message, VirtualNetwork vn);
    void tx_ptl_ack(Message* message, VirtualNetwork vn);
    void tx_e2e_ack(Message* message, VirtualNetwork vn);
    void tx_response(Message* message, VirtualNetwork vn);

    void rx_put(Message* message, VirtualNetwork vn);
    void rx_atomic(Message* message, VirtualNetwork vn);
    void rx_get(Message* message, VirtualNetwork vn, bool fetch_atomic);
    void rx_response(Message* message);
    void rx_ptl_ack(Message* message);
    void rx_e2e_ack(Message* message);

    void prepare_send(Message* message, VirtualNetwork vn);
    void network_send(Message* message, VirtualNetwork vn, bool blocking);
    void queue_ack(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn);

    uint32_t nid_;
    NodeHosts hosts_;
    const PlatformSpec& spec_;
    CommandQueue tx_[4];
    CommandQueue e2e_acks_[4];
    simgrid::s4u::Mailbox* rx_[4] = {};  // simulated sends nobody waits for; drained into rx_arrived_
    ArrivalQueue rx_arrived_[4];
    std::vector<NetworkInterface*> interfaces_;  // in creation order
    E2eTracker e2e_;
};

class NicModel {
public:
    NicModel(const PlatformSpec& spec, std::vector<NodeHosts> nodes);
    void start();
    Nic& nic(uint32_t nid) { return *nics_.at(index_of_nid_.at(nid)); }
    bool has_nid(uint32_t nid) const { return index_of_nid_.count(nid) != 0; }
    size_t size() const { return nics_.size(); }
    const PlatformSpec& spec() const { return spec_; }
    const NicTimings& timings() const { return spec_.timings; }
    LoneTransfers& lone_transfers() { return lone_; }
    uint64_t bytes_moved = 0;

private:
    PlatformSpec spec_;
    LoneTransfers lone_;
    std::vector<std::unique_ptr<Nic>> nics_;  // in node order
    std::map<uint32_t, size_t> index_of_nid_;
};

NicModel& nic_model();
void set_nic_model(NicModel* model);

// A blocking transfer, computed or simulated (lone_transfers.hpp); not traced.
void transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes);
// A blocking PCIe transfer of node `nid`, in the trace as `op` when tracing.
void pci_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op, uint32_t nid);

// An asynchronous one: wait() ends it and writes its trace row. Simulated (`comm`, counted
// on its links until the wait), or computed (it ends at `computed_end`).
struct AsyncPci {
    simgrid::s4u::CommPtr comm;
    double start = 0.0;
    trace::Op op = trace::Op::PCI_DMA_PAYLOAD;
    uint32_t nid = 0;
    simgrid::s4u::Host* from = nullptr;
    simgrid::s4u::Host* to = nullptr;
    double computed_end = -1.0;
    static AsyncPci start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op,
                                   uint32_t nid);
    void wait();
    explicit operator bool() const { return comm != nullptr || computed_end >= 0; }
};
// A transfer nobody waits for (PIO payloads): a simulated one is ended, and traced, by a
// helper actor.
void detached_pci(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op, uint32_t nid);

// Shared by the NIC engines and the CPU side.
double first_packet_wait(uint64_t size);
uint64_t inline_limit(bool matching);
uint64_t pio_limit(bool matching);
VirtualNetwork response_vn(VirtualNetwork request_vn);

// Writes an event into an EQ of `owner`: a 96-byte PCIe write, then delivery to the
// rank's core after the route latency from the calling actor's host.
void write_event(Nic& nic, RankPortals& owner, uint32_t eq, const ptl_event_t& event);
// PTL_EVENT_AUTO_FREE of an overflow entry that was automatically unlinked, once no
// unexpected header points into it any more.
void auto_free_if_due(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry);
// An event about a list entry itself (LINK, AUTO_UNLINK, AUTO_FREE), in its PT's EQ.
void write_entry_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, const ListEntry& entry,
                       ptl_event_kind_t type);
// Counting event; wakes waiters of the rank and fires the triggered operations whose
// threshold is reached.
void count_event(RankPortals& owner, uint32_t ct, uint64_t success, uint64_t failure);
// The count of a completed operation (docs/model.md "Counting events"): a failed one adds 1
// to `failure` and nothing to `success`; one that succeeded adds `bytes` when the MD or
// entry counts bytes, else 1, to `success`.
void count_completion(RankPortals& owner, uint32_t ct, bool count_bytes, uint64_t bytes, ptl_ni_fail_t fail);
// The same for an MD's counter, if the MD counts this kind of event (`which`:
// PTL_MD_EVENT_CT_SEND, _ACK or _REPLY).
void count_md_event(RankPortals& owner, const MemoryDescriptor& md, uint32_t which, uint64_t bytes, ptl_ni_fail_t fail);
void set_counter(RankPortals& owner, uint32_t ct, ptl_ct_event_t value);
// A triggered data operation whose threshold was reached: the NIC reads the payload now
// and queues the command itself (no PCIe command write, no command-queue slot).
void issue_triggered(const TransferPtr& transfer);
// Reads the payload (Put) or operand (Atomic, FetchAtomic, Swap) from the initiator, or
// notes that the NIC will read it when the message lands. `carried`: the bytes the rank
// copied into its command at the call (wire::DataCommand), taken instead of a read now.
void capture_payload(const TransferPtr& transfer, const uint8_t* carried = nullptr);
// The initiator can no longer guarantee its buffers (MD, NI or library released, process
// ending): the payloads still to be read from its memory are read now.
void capture_pending_payloads(RankPortals& initiator);
void emit_send(Nic& nic, Transfer& transfer);
// The initiator's part of a PTL ACK that came back (after its SEND): CT_ACK, then the ACK
// event if the operation asked for one.
void emit_ack(Nic& nic, Transfer& transfer);
// The initiator's NIC gave up on a request: the event the program waits for says
// PTL_NI_UNDELIVERABLE.
void report_undeliverable(Nic& nic, Transfer& transfer);

}  // namespace s4bxi::sim
