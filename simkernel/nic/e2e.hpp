// BXI end-to-end reliability and flow control of one node (appendix §6 and §7.1): every
// message but BXI ACKs holds an E2E entry and, with in-flight limits, credits until it
// is acknowledged; unacknowledged messages are sent again after a timeout, and given up
// after the last retry with PTL_NI_UNDELIVERABLE reported to the initiator.
#pragma once

#include <cstdint>
#include <coroutine>
#include <deque>
#include <map>
#include <memory>
#include <tuple>

#include <simgrid/s4u.hpp>

#include "nic/instant_order.hpp"
#include "nic/nic_task.hpp"

#include "platform/platform.hpp"

namespace s4bxi::sim {

class Nic;
struct Message;
enum class VirtualNetwork : uint32_t;

// One message waiting for its acknowledgement.
struct E2eRecord {
    // A copy (the receiver frees the original), until the message is acknowledged.
    std::shared_ptr<Message> message;
    VirtualNetwork vn;
    double deadline = 0.0;
    int retries = 0;
    bool acknowledged = false;
};
using E2eRecordPtr = std::shared_ptr<E2eRecord>;

class E2eTracker {
public:
    E2eTracker(Nic& nic, const PlatformSpec& spec);
    void start();

    // TX side, right after the send preparation: takes an entry on a first transmission
    // (may wait while all are in use), stamps the deadline, queues the record.
    NicTask<E2eRecordPtr> register_send(const Message& message, VirtualNetwork vn, E2eRecordPtr previous);

    // The message is acknowledged (PTL ACK, response, BXI ACK, quick ACK): frees its
    // entry and credits and re-queues the messages parked by flow control.
    void acknowledge(const E2eRecordPtr& record);

    // Flow control on dequeue (first transmissions only): takes the message's credits and
    // notes them in it. False: the message must wait (park it).
    bool take_credits(Message& message, VirtualNetwork vn);
    void park(Message* message, VirtualNetwork vn);

    uint64_t retried = 0;
    uint64_t gave_up = 0;

private:
    void arm();
    void deadline_reached();
    void disarm();
    NicTask<> give_up(E2eRecordPtr record);
    void release_credits(E2eRecord& record);

    Nic& nic_;
    const PlatformSpec& spec_;
    // Entries per virtual network: requests and responses have their own, so that a node
    // whose requests hold every entry can still answer its peers (with one pool, two
    // nodes flooding each other wait for each other's responses forever).
    struct Entries {
        uint32_t free = 0;
        std::deque<std::pair<std::coroutine_handle<>, StepOwner>> waiting;  // TX engines, in arrival order
    };
    Entries entries_[4];
    struct TakeEntry {
        Entries& entries;
        bool await_ready() const noexcept { return entries.free > 0; }
        void await_suspend(std::coroutine_handle<> tx) { entries.waiting.emplace_back(tx, instant_order().current()); }
        void await_resume() { --entries.free; }
    };
    void release_entry(Entries& entries);
    std::deque<E2eRecordPtr> pending_;  // in deadline order: the timeout is constant
    // The kernel timer set at the deadline of the oldest unacknowledged record, and that
    // record: acknowledging it moves the timer to the next one at once.
    simgrid::kernel::timer::Timer* deadline_timer_ = nullptr;
    const E2eRecord* armed_ = nullptr;
    // In-flight credits: per (VN, target NID) and per (VN, source pid, target pid, target NID).
    std::map<std::tuple<uint32_t, uint32_t>, uint32_t> to_target_;
    std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> to_process_;
    std::map<uint32_t, std::deque<Message*>> parked_;  // by VN
};

}  // namespace s4bxi::sim
