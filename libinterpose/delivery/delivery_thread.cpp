#include "delivery/delivery_thread.hpp"

#include <portals4.h>

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>

#include "rank/rank_state.hpp"
#include "s4bxi/slot_futex.hpp"

namespace s4bxi::interpose {
namespace {

using wire::DeliveryState;

// It only waits and copies: a small stack is plenty.
constexpr size_t kStackBytes = 64 * 1024;

std::atomic<bool> g_started{false};

uint32_t load_state(const wire::Delivery& d)
{
    return d.state.load(std::memory_order_seq_cst);
}

// One order: the payload from the other rank's memory into ours, or from ours into the
// other's.
void carry_out(wire::Delivery& d)
{
    uint64_t moved = 0;
    int error = 0;
    while (moved < d.length) {
        const auto left = static_cast<size_t>(d.length - moved);
        iovec source{reinterpret_cast<void*>(d.source_address + moved), left};
        iovec target{reinterpret_cast<void*>(d.target_address + moved), left};
        ssize_t got = d.writes ? process_vm_writev(d.peer_pid, &source, 1, &target, 1, 0)
                               : process_vm_readv(d.peer_pid, &target, 1, &source, 1, 0);
        if (got <= 0) {
            error = got < 0 ? errno : EFAULT;
            break;
        }
        moved += static_cast<uint64_t>(got);
    }
    d.moved = moved;
    d.error = error;
    d.state.store(static_cast<uint32_t>(DeliveryState::Done), std::memory_order_seq_cst);
    if (d.sleepers.load(std::memory_order_seq_cst) != 0) futex(&d.state, FUTEX_WAKE, INT_MAX, nullptr);
}

// The thread makes no Portals call, reads no clock and takes no signal (all blocked): the
// program, the simulated time and the server's view of the rank's threads never see it.
// It lives as long as the process; exec or exit end it.
void* serve(void* argument)
{
    auto& d = static_cast<wire::Slot*>(argument)->delivery;
    const uint32_t posted = static_cast<uint32_t>(DeliveryState::Posted);
    d.thread_id.store(static_cast<uint32_t>(syscall(SYS_gettid)), std::memory_order_seq_cst);
    futex(&d.thread_id, FUTEX_WAKE, INT_MAX, nullptr);
    while (true) {
        uint32_t seen = load_state(d);
        if (seen != posted) {
            d.sleepers.fetch_add(1, std::memory_order_seq_cst);
            futex(&d.state, FUTEX_WAIT, seen, nullptr);
            d.sleepers.fetch_sub(1, std::memory_order_seq_cst);
            continue;
        }
        take_delivery_order(d);
    }
    return nullptr;
}

}  // namespace

bool take_delivery_order(wire::Delivery& d)
{
    // The server may withdraw an order nobody took, and another thread may take it first.
    uint32_t posted = static_cast<uint32_t>(DeliveryState::Posted);
    const uint32_t taken = static_cast<uint32_t>(DeliveryState::Taken);
    if (d.state.load(std::memory_order_relaxed) != posted ||
        !d.state.compare_exchange_strong(posted, taken, std::memory_order_seq_cst))
        return false;
    carry_out(d);
    return true;
}

bool replied_or_delivering(wire::Slot& slot)
{
    const uint32_t reply = static_cast<uint32_t>(wire::SlotState::Replied);
    auto replied = [&] { return slot.state.load(std::memory_order_acquire) == reply; };
    return replied() || (take_delivery_order(slot.delivery) && replied());
}

void start_delivery_thread_for(wire::Slot& slot, uint64_t length, uint64_t copy_once_from)
{
    if (copy_once_from == 0 || length < copy_once_from || g_started.load(std::memory_order_relaxed)) return;
    if (g_started.exchange(true)) return;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0) return;
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attributes, kStackBytes);
    // The new thread inherits the mask: every signal stays with the program's threads.
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    pthread_t thread;
    // Without the thread, payloads go through the server, as below the size.
    const bool created = create_own_thread(&thread, &attributes, serve, &slot) == 0;
    pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    pthread_attr_destroy(&attributes);
    if (!created) return;
    pthread_setname_np(thread, "s4bxi-delivery");
    // Ready before the call that asked for it goes on: the first large payload, however
    // soon, finds it (a second at most, on a host too loaded to run it sooner).
    std::atomic<uint32_t>& id = slot.delivery.thread_id;
    for (int slice = 0; slice < 100 && id.load(std::memory_order_seq_cst) == 0; ++slice) {
        timespec timeout{0, 10'000'000};
        futex(&id, FUTEX_WAIT, 0, &timeout);
    }
}

void start_delivery_thread_if_due(wire::Slot& slot, wire::Op op, const void* args, uint64_t copy_once_from)
{
    if (op == wire::Op::PtlMDBind) {
        const auto* bind = static_cast<const wire::MDBindArgs*>(args);
        if (!(bind->options & PTL_IOVEC)) start_delivery_thread_for(slot, bind->length, copy_once_from);
    } else if (op == wire::Op::PtlMEAppend) {
        const auto* entry = static_cast<const wire::MEAppendArgs*>(args);
        if (!(entry->options & PTL_IOVEC)) start_delivery_thread_for(slot, entry->length, copy_once_from);
    }
}

}  // namespace s4bxi::interpose
