#include "nic/e2e.hpp"

#include <fmt/format.h>

#include <utility>

#include <simgrid/kernel/Timer.hpp>

#include "nic/nic_model.hpp"
#include "run/scheduling_hooks.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(s4bxi_e2e, "BXI end-to-end reliability and flow control");

namespace s4bxi::sim {

namespace sg4 = simgrid::s4u;

namespace {

std::tuple<uint32_t, uint32_t> target_key(const Message& m, VirtualNetwork vn)
{
    return {static_cast<uint32_t>(vn), m.destination_nid};
}

std::tuple<uint32_t, uint32_t, uint32_t, uint32_t> process_key(const Message& m, VirtualNetwork vn)
{
    const Transfer& t = *m.transfer;
    return {static_cast<uint32_t>(vn), t.initiator_pid, t.target_pid, m.destination_nid};
}

}  // namespace

E2eTracker::E2eTracker(Nic& nic, const PlatformSpec& spec) : nic_(nic), spec_(spec)
{
}

void E2eTracker::start()
{
    for (auto& entries : entries_) entries.free = spec_.e2e_entries;
    if (!spec_.e2e) return;
    // The deadlines are kernel timers, set and moved by the TX and RX engines as they send
    // and acknowledge: no actor of its own to wake twice per message. This one only waits
    // for the end: daemons are killed when the last rank ends, and a deadline left armed
    // would keep the engine running, and simulated time with it, up to a retransmission
    // nobody sends.
    auto watch = sg4::Actor::create(nic_.hosts().name + "_E2E", nic_.hosts().nic,
                                    [] { sg4::Semaphore::create(0)->acquire(); });
    watch->daemonize();
    watch->on_exit([this](bool) { disarm(); });
}

NicTask<E2eRecordPtr> E2eTracker::register_send(const Message& message, VirtualNetwork vn, E2eRecordPtr previous)
{
    if (!spec_.e2e || message.type == MessageType::E2eAck) co_return nullptr;
    E2eRecordPtr record = previous;
    if (record && record->acknowledged) co_return record;  // a retransmission overtaken by its ACK
    if (!record) {
        co_await TakeEntry{entries_[static_cast<int>(vn)]};  // may hold the TX while every entry is in use
        record = std::make_shared<E2eRecord>();
        record->vn = vn;
    }
    record->message = std::make_shared<Message>(message);
    record->deadline = sg4::Engine::get_clock() + spec_.retry_timeout;
    pending_.push_back(record);
    if (!deadline_timer_) arm();
    co_return record;
}

// A freed entry goes to the TX engine that waited longest for one, in a step of its own.
void E2eTracker::release_entry(Entries& entries)
{
    ++entries.free;
    if (entries.waiting.empty()) return;
    auto [tx, owner] = entries.waiting.front();
    entries.waiting.pop_front();
    instant_order().resume_at(sg4::Engine::get_clock(), owner, tx);
}

void E2eTracker::acknowledge(const E2eRecordPtr& record)
{
    if (!record || record->acknowledged) return;
    record->acknowledged = true;
    release_entry(entries_[static_cast<int>(record->vn)]);
    release_credits(*record);
    // The message holds its transfer, which holds this record: drop the message, or the
    // pair would outlive the run (and the payload with it).
    record->message.reset();
    if (record.get() == armed_) {
        disarm();
        arm();
        // Last, once the timers are right: waking the gate is a simcall, during which
        // other actors run (and may arm a timer of their own).
        g_scheduling_hooks.wake_gate_for_withdrawn_event();
    }
}

// Sets the timer at the deadline of the oldest unacknowledged record, if any. It only
// runs while some message is unacknowledged, so a quiet node leaves no pending timer that
// would drag simulated time forward. A kernel timer that acknowledge() removes at once,
// not a timed wait: the gate, looking for the next event while a rank waited outside the
// simulation, took a wait's timeout still among the engine's events for one 10 s on and
// let simulated time run there for nothing (SOS's threaded tests ended at hundreds or
// thousands of simulated seconds, in multiples of the retry timeout, with no
// retransmission).
void E2eTracker::arm()
{
    if (deadline_timer_) return;  // armed already, for the oldest record then
    while (!pending_.empty() && pending_.front()->acknowledged) pending_.pop_front();
    if (pending_.empty()) return;
    armed_ = pending_.front().get();
    deadline_timer_ = simgrid::kernel::timer::Timer::set(armed_->deadline, [this] {
        deadline_timer_ = nullptr;  // the engine deletes a timer that fired
        armed_ = nullptr;
        deadline_reached();
    });
}

void E2eTracker::disarm()
{
    simgrid::kernel::timer::Timer* timer = std::exchange(deadline_timer_, nullptr);
    armed_ = nullptr;
    if (timer) timer->remove();
}

// In the engine, when the timer fires: every record past its deadline is sent again, or
// given up after its last retry.
void E2eTracker::deadline_reached()
{
    ++g_sim_activity;
    while (!pending_.empty()) {
        E2eRecordPtr record = pending_.front();
        if (record->acknowledged) {
            pending_.pop_front();
            continue;
        }
        if (sg4::Engine::get_clock() < record->deadline) break;
        pending_.pop_front();
        if (record->retries >= static_cast<int>(spec_.max_retries)) {
            // Reporting it writes events, which takes simulated time: steps of their own.
            instant_order().at(sg4::Engine::get_clock(), StepOwner::of(nic_.nid(), NicEngine::Reliability),
                               [this, record] { spawn(give_up(record)); });
            continue;
        }
        ++record->retries;
        ++retried;
        XBT_DEBUG("retransmission %d of a message to node %u", record->retries, record->message->destination_nid);
        auto* copy = new Message(*record->message);
        copy->retries = record->retries;
        nic_.tx_queue(record->vn).push_from_nic(copy);
    }
    arm();
}

bool E2eTracker::take_credits(Message& message, VirtualNetwork vn)
{
    if (!spec_.e2e || message.type == MessageType::E2eAck) return true;
    uint32_t* target = nullptr;
    uint32_t* process = nullptr;
    if (spec_.max_inflight_to_target) {
        auto [it, created] = to_target_.try_emplace(target_key(message, vn), spec_.max_inflight_to_target);
        target = &it->second;
    }
    if (spec_.max_inflight_to_process) {
        auto [it, created] = to_process_.try_emplace(process_key(message, vn), spec_.max_inflight_to_process);
        process = &it->second;
    }
    if ((target && *target == 0) || (process && *process == 0)) return false;
    if (target) {
        --*target;
        message.credit_to_target = true;
    }
    if (process) {
        --*process;
        message.credit_to_process = true;
    }
    return true;
}

void E2eTracker::park(Message* message, VirtualNetwork vn)
{
    parked_[static_cast<uint32_t>(vn)].push_back(message);
}

void E2eTracker::release_credits(E2eRecord& record)
{
    Message& m = *record.message;
    if (m.credit_to_target) ++to_target_[target_key(m, record.vn)];
    if (m.credit_to_process) ++to_process_[process_key(m, record.vn)];
    bool released = m.credit_to_target || m.credit_to_process;
    m.credit_to_target = m.credit_to_process = false;
    if (!released) return;
    // Every parked message of the VN tries again, behind what is already queued.
    auto& parked = parked_[static_cast<uint32_t>(record.vn)];
    while (!parked.empty()) {
        nic_.tx_queue(record.vn).push_detached(parked.front());
        parked.pop_front();
    }
}

NicTask<> E2eTracker::give_up(E2eRecordPtr record)
{
    ++gave_up;
    std::shared_ptr<Message> message = record->message;  // acknowledge() drops the record's
    const Message& m = *message;
    XBT_INFO("node %u gives up a message to node %u after %d retransmissions", nic_.nid(), m.destination_nid,
             record->retries);
    acknowledge(record);
    if (!is_request(m.type)) co_return;  // a lost ACK or response: the initiator gives up on its own
    nic_model().nic(m.destination_nid).rx_queue(record->vn).skip(*m.transfer);  // its target waits no more
    co_await report_undeliverable(nic_, *m.transfer);
}

}  // namespace s4bxi::sim
