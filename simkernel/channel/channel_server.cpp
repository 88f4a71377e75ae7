#include "channel/channel_server.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#include <new>
#include <stdexcept>
#include <string>

#include "s4bxi/brief_wait.hpp"
#include "s4bxi/call_records.hpp"
#include "s4bxi/mirror.hpp"
#include "s4bxi/slot_futex.hpp"

namespace s4bxi::sim {
namespace {

// `bytes` of zeroed shared memory, with T constructed at its start.
template <class T>
SharedObject<T> create_shared(const char* name, size_t bytes = sizeof(T))
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) != 0) throw std::runtime_error(std::string("cannot create ") + name);
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (memory == MAP_FAILED) throw std::runtime_error(std::string("cannot map ") + name);
    return {new (memory) T{}, fd};
}

}  // namespace

SharedObject<wire::Slot> create_slot()
{
    // The mirror follows the slot (mirror.hpp); a fresh memfd is zeroed, which is an
    // empty mirror, and only its written pages take memory.
    return create_shared<wire::Slot>("s4bxi-slot", wire::kChannelWithRecordsBytes);
}

SharedObject<wire::Doorbell> create_doorbell()
{
    return create_shared<wire::Doorbell>("s4bxi-doorbell");
}

double wall_now()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

uint32_t wait_doorbell(wire::Doorbell& doorbell, uint32_t seen, double timeout_s)
{
    auto now_ns = [] { return static_cast<int64_t>(wall_now() * 1e9); };
    if (brief_wait([&] { return doorbell.count.load(std::memory_order_acquire) != seen; }, now_ns))
        return doorbell.count.load(std::memory_order_acquire);
    doorbell.server_waiting.store(1, std::memory_order_seq_cst);
    uint32_t now = doorbell.count.load(std::memory_order_seq_cst);
    if (now == seen) {
        timespec timeout{static_cast<time_t>(timeout_s), static_cast<long>((timeout_s - static_cast<time_t>(timeout_s)) * 1e9)};
        futex(&doorbell.count, FUTEX_WAIT, seen, &timeout);
        now = doorbell.count.load(std::memory_order_acquire);
    }
    doorbell.server_waiting.store(0, std::memory_order_relaxed);
    return now;
}

void publish_reply(wire::Slot& slot)
{
    // All sleepers: the thread that made the request, and any other thread of the rank
    // waiting to claim the slot after it.
    set_slot_state_and_wake(slot, wire::SlotState::Replied);
}

}  // namespace s4bxi::sim
