// The BXI NIC model (docs/model.md): per node, TX and RX engines per virtual network,
// command queues fed over PCIe, inline/PIO/DMA paths, event writes, BXI end-to-end ACKs.
#pragma once

#include <portals4.h>

#include <coroutine>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <simgrid/s4u.hpp>

#include "nic/e2e.hpp"
#include "nic/instant_order.hpp"
#include "nic/lone_transfers.hpp"
#include "nic/network_models.hpp"
#include "nic/nic_task.hpp"
#include "nic/trace.hpp"
#include "platform/platform.hpp"
#include "portals/portals_state.hpp"

namespace s4bxi::sim {

enum class VirtualNetwork : uint32_t { ServiceRequest = 0, ComputeRequest = 1, ServiceResponse = 2, ComputeResponse = 3 };

enum class MessageType { Put, Get, Atomic, FetchAtomic, PtlAck, E2eAck, GetResponse, FetchAtomicResponse };
// A message that an initiator's command sends, not an answer (an ACK or a response).
inline bool is_request(MessageType type)
{
    return type == MessageType::Put || type == MessageType::Get || type == MessageType::Atomic ||
           type == MessageType::FetchAtomic;
}
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
    // Started under the flow model (network_models.hpp): it ends under it, whatever the
    // model when its ACK or response goes back.
    bool flow = false;
    // Its rank among the requests its initiator's node sent to the target's node on its VN
    // (stamp_order), by which the target's RX engine takes them: under the flow model, or
    // in a run that switches models, a request can otherwise overtake an earlier one.
    bool ordered = false;
    uint64_t order = 0;
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

// The messages waiting for one NIC engine. A message pushed while the engine waits for one
// wakes it in a step of its own (instant_order.hpp), whoever pushed it.
class EngineQueue {
public:
    void init(StepOwner owner) { owner_ = owner; }
    void push(Message* message);
    struct Pop {
        EngineQueue& queue;
        bool await_ready() const noexcept { return !queue.messages_.empty(); }
        void await_suspend(std::coroutine_handle<> engine) { queue.waiter_ = engine; }
        Message* await_resume();
    };
    Pop pop() { return Pop{*this}; }  // in the engine's coroutine: co_await
    StepOwner owner() const { return owner_; }

    // Messages that come through simulated transfers (a network send nobody waits for, a
    // command a core writes for a trigger) are handed over in the order they were sent,
    // whatever order their transfers end in: a later one that ends first waits for the
    // ones before it, as the messages of a NIC's input port do. expect() at the send;
    // landed() when its transfer ends (nullptr: lost), with what to do at the hand-over.
    uint64_t expect()
    {
        expected_.emplace_back();
        return first_expected_ + expected_.size() - 1;
    }
    void landed(uint64_t ticket, Message* message, std::function<void()> at_hand_over);

    // Requests stamped at their call (stamp_order) are taken in their source's order: a
    // small one started under the flow model would otherwise land before a large one sent
    // just before it, which Portals' ordered matching and MPI's non-overtaking rule forbid.
    // skip(): a stamped request that will never land (lost for good), not to be waited for.
    void skip(const Transfer& request);

private:
    struct SourceOrder {
        uint64_t taken = 0;  // the requests up to this order were handed over
        std::multimap<uint64_t, Message*> early;  // landed before one sent earlier; nullptr: skipped
    };
    void push_now(Message* message);
    void hand_over_in_order(uint32_t source, uint64_t order, Message* message);
    std::map<uint32_t, SourceOrder> in_order_;

    struct Expected {
        bool landed = false;
        Message* message = nullptr;
        std::function<void()> at_hand_over;
    };
    std::deque<Message*> messages_;
    std::coroutine_handle<> waiter_;
    StepOwner owner_;
    std::deque<Expected> expected_;
    uint64_t first_expected_ = 0;
};

// A TX command queue: fed over PCIe by 64-byte command writes when commands are
// modelled (the writer waits for its transfer, then queues the command), or straight
// into the engine's queue when they are not.
class CommandQueue {
public:
    void init(StepOwner owner, simgrid::s4u::Host* nic_host, bool over_pcie);
    void push_blocking(Message* message, uint64_t bytes);  // from a core (a proxy): a PCIe command write
    void push_detached(Message* message);                  // from the NIC itself, or a core's trigger
    void push_from_nic(Message* message) { queue_.push(message); }
    EngineQueue::Pop pop() { return queue_.pop(); }

private:
    bool over_pcie_ = true;
    simgrid::s4u::Host* nic_host_ = nullptr;
    EngineQueue queue_;
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
    EngineQueue& rx_queue(VirtualNetwork vn) { return rx_[static_cast<int>(vn)]; }
    std::vector<NetworkInterface*>& interfaces() { return interfaces_; }
    E2eTracker& e2e() { return e2e_; }
    // The next order of a request from this node to node `target` on `vn` (stamp_order).
    uint64_t next_order(uint32_t target, VirtualNetwork vn) { return orders_sent_[{target, static_cast<int>(vn)}]++; }

private:
    NicTask<> tx_loop(VirtualNetwork vn);
    NicTask<> e2e_ack_loop(VirtualNetwork vn);
    NicTask<> rx_loop(VirtualNetwork vn);

    NicTask<> tx_put_like(Message* message, VirtualNetwork vn);
    NicTask<> tx_get(Message* message, VirtualNetwork vn);
    NicTask<> tx_ptl_ack(Message* message, VirtualNetwork vn);
    NicTask<> tx_e2e_ack(Message* message, VirtualNetwork vn);
    NicTask<> tx_response(Message* message, VirtualNetwork vn);

    NicTask<> rx_put(Message* message, VirtualNetwork vn);
    NicTask<> rx_atomic(Message* message, VirtualNetwork vn);
    NicTask<> rx_get(Message* message, VirtualNetwork vn, bool fetch_atomic);
    NicTask<> rx_response(Message* message);
    NicTask<> rx_ptl_ack(Message* message);
    NicTask<> rx_e2e_ack(Message* message);

    NicTask<> prepare_send(Message* message, VirtualNetwork vn);
    NicTask<> network_send(Message* message, VirtualNetwork vn, bool blocking, double bandwidth_share = 1.0);
    // The flow model (flow_model.cpp): a message is one network transfer, then the
    // destination's handling of it, which costs no time there.
    NicTask<> flow_send(Message* message, VirtualNetwork vn);
    NicTask<> flow_answer(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn);
    NicTask<> queue_ack(const TransferPtr& transfer, bool ptl_ack, VirtualNetwork request_vn);

    uint32_t nid_;
    NodeHosts hosts_;
    const PlatformSpec& spec_;
    CommandQueue tx_[4];
    CommandQueue e2e_acks_[4];
    EngineQueue rx_[4];
    double rx_free_at_[4] = {};  // flow model: when each RX takes its next message
    double answers_free_at_ = 0.0;  // flow model: when the next ACK or response may leave
    double tx_free_at_[4] = {};     // flow model: when each VN's next payload may leave
    std::vector<NetworkInterface*> interfaces_;  // in creation order
    E2eTracker e2e_;
    std::map<std::pair<uint32_t, int>, uint64_t> orders_sent_;
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
    NetworkModels& models() { return models_; }
    uint64_t bytes_moved = 0;

private:
    PlatformSpec spec_;
    NetworkModels models_{spec_};
    LoneTransfers lone_;
    std::vector<std::unique_ptr<Nic>> nics_;  // in node order
    std::map<uint32_t, size_t> index_of_nid_;
};

NicModel& nic_model();
void set_nic_model(NicModel* model);

// A transfer, computed or simulated (lone_transfers.hpp), not traced: awaited in a NIC
// step; in a proxy, it blocks (run_in_actor). Throws simgrid::NetworkFailureException
// when a link on its way is down.
NicTask<> transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes);
// A PCIe transfer of node `nid`, in the trace as `op` when tracing.
NicTask<> pci_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op, uint32_t nid);
// Calls `then(failed)` in a step of `owner` when the simulated transfer `comm` ends.
// forget_transfer_watchers(): a new run in this process.
void forget_transfer_watchers();
void when_ended(simgrid::s4u::CommPtr comm, StepOwner owner, std::function<void(bool failed)> then);

// An asynchronous one: wait() ends it and writes its trace row. Simulated (counted on its
// links until it ends), or computed (its end is known at its start).
class AsyncPci {
public:
    struct State {
        simgrid::s4u::CommPtr comm;  // null: computed
        double start = 0.0;
        double end = 0.0;
        bool ended = false;
        bool failed = false;
        trace::Op op = trace::Op::PCI_DMA_PAYLOAD;
        uint32_t nid = 0;
        simgrid::s4u::Host* from = nullptr;
        simgrid::s4u::Host* to = nullptr;
        std::coroutine_handle<> waiter;
    };
    AsyncPci() = default;
    static AsyncPci start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op,
                                   uint32_t nid);
    NicTask<> wait();
    explicit operator bool() const { return state != nullptr; }

    std::shared_ptr<State> state;

private:
    explicit AsyncPci(std::shared_ptr<State> s) : state(std::move(s)) {}
};
// A transfer nobody waits for (PIO payloads): traced when it ends.
void detached_pci(simgrid::s4u::Host* from, simgrid::s4u::Host* to, uint64_t bytes, trace::Op op, uint32_t nid);

// Shared by the NIC engines and the CPU side.
double first_packet_wait(uint64_t size);
uint64_t inline_limit(bool matching);
uint64_t pio_limit(bool matching);
VirtualNetwork response_vn(VirtualNetwork request_vn);

// Writes an event into an EQ of `owner`: a 96-byte PCIe write, then delivery to the
// rank's core after the route latency from the writer's host (the NIC's in a step, the
// proxy's core in a proxy).
NicTask<> write_event(Nic& nic, RankPortals& owner, uint32_t eq, ptl_event_t event, bool over_pcie);
// What of the detailed model a transfer goes through: the platform's switches for one
// started under the detailed model, none for one started under the flow model (its
// payloads, commands and events cross no PCIe, and E2E does not watch it).
struct ModelSwitches {
    bool e2e = false;
    bool pci = false;           // nic.model_pci: payloads over PCIe
    bool pci_commands = false;  // nic.model_pci_commands: command and event writes over PCIe
};
ModelSwitches switches_of(const Transfer& t);
// Those of a call made now: a command, an entry's events (LINK, AUTO_UNLINK, overflow).
ModelSwitches switches_now();
// PTL_EVENT_AUTO_FREE of an overflow entry that was automatically unlinked, once no
// unexpected header points into it any more.
NicTask<> auto_free_if_due(Nic& nic, RankPortals& owner, NetworkInterface& ni, ListEntry& entry, bool over_pcie);
// An event about a list entry itself (LINK, AUTO_UNLINK, AUTO_FREE), in its PT's EQ.
NicTask<> write_entry_event(Nic& nic, RankPortals& owner, NetworkInterface& ni, const ListEntry& entry,
                            ptl_event_kind_t type, bool over_pcie);
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
// At a data call (or a trigger's firing), once its model is known: its order among its
// node's requests to the target's node, when they must be taken in that order (flow
// model, or a run that switches models).
void stamp_order(Transfer& t);
// Reads the payload (Put) or operand (Atomic, FetchAtomic, Swap) from the initiator, or
// notes that the NIC will read it when the message lands. `carried`: the bytes the rank
// copied into its command at the call (wire::DataCommand), taken instead of a read now.
void capture_payload(const TransferPtr& transfer, const uint8_t* carried = nullptr);
// The initiator can no longer guarantee its buffers (MD, NI or library released, process
// ending): the payloads still to be read from its memory are read now.
void capture_pending_payloads(RankPortals& initiator);
NicTask<> emit_send(Nic& nic, Transfer& transfer);
// The initiator's part of a PTL ACK that came back (after its SEND): CT_ACK, then the ACK
// event if the operation asked for one.
NicTask<> emit_ack(Nic& nic, Transfer& transfer);
// The initiator's NIC gave up on a request: the event the program waits for says
// PTL_NI_UNDELIVERABLE.
NicTask<> report_undeliverable(Nic& nic, Transfer& transfer);

}  // namespace s4bxi::sim
