// The turn of a rank's threads at its one slot and mirror: first come, first served (a
// ticket lock). Open MPI's progress loop calls again as soon as a call returns: a lock that
// let it take the turn straight back starved the thread that waited to send, while every
// empty poll moved simulated time on. Waiters sleep on the ticket served (futex).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace s4bxi::interpose {

class TicketLock {
public:
    // Takes the turn if nobody holds it or waits for it.
    bool try_take(int32_t tid)
    {
        uint32_t serving = serving_.load(std::memory_order_acquire);
        uint32_t free = serving;  // nobody holds or waits: the next ticket is the one served
        if (!next_.compare_exchange_strong(free, serving + 1, std::memory_order_acquire, std::memory_order_relaxed))
            return false;
        holder_.store(tid, std::memory_order_relaxed);
        return true;
    }

    // Waits for the turn. `first_wait` runs once, before the first sleep, if the thread has
    // to wait. Returns whether it did.
    template <class FirstWait>
    bool take(int32_t tid, FirstWait first_wait)
    {
        uint32_t ticket = next_.fetch_add(1, std::memory_order_acquire);
        bool waited = false;
        while (true) {
            uint32_t serving = serving_.load(std::memory_order_acquire);
            if (serving == ticket) break;
            if (!waited) {
                waited = true;
                first_wait();
            }
            waiters_.fetch_add(1, std::memory_order_seq_cst);
            timespec timeout{0, 1000000};
            if (serving_.load(std::memory_order_seq_cst) == serving)
                syscall(SYS_futex, reinterpret_cast<uint32_t*>(&serving_), FUTEX_WAIT, serving, &timeout, nullptr, 0);
            waiters_.fetch_sub(1, std::memory_order_relaxed);
        }
        holder_.store(tid, std::memory_order_relaxed);
        return waited;
    }

    void give()
    {
        holder_.store(0, std::memory_order_relaxed);
        serving_.fetch_add(1, std::memory_order_seq_cst);
        // Every sleeper looks: only the one with the next ticket goes on.
        if (waiters_.load(std::memory_order_seq_cst) > 0)
            syscall(SYS_futex, reinterpret_cast<uint32_t*>(&serving_), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
    }

    // The kernel id of the thread that has the turn (0: none).
    int32_t holder() const { return holder_.load(std::memory_order_relaxed); }

private:
    std::atomic<uint32_t> next_{0};     // the next ticket to hand out
    std::atomic<uint32_t> serving_{0};  // the ticket whose turn it is
    std::atomic<int32_t> holder_{0};
    std::atomic<uint32_t> waiters_{0};
};

}  // namespace s4bxi::interpose
