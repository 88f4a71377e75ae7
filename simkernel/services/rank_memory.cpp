#include "services/rank_memory.hpp"

#include <sys/uio.h>

#include "run/memory_write.hpp"

namespace s4bxi::sim {
namespace {

template <class Transfer>
bool transfer_all(Transfer transfer, pid_t pid, uint64_t address, void* buffer, uint64_t length)
{
    auto* local = static_cast<char*>(buffer);
    while (length > 0) {
        iovec here{local, static_cast<size_t>(length)};
        iovec there{reinterpret_cast<void*>(address), static_cast<size_t>(length)};
        ssize_t moved = transfer(pid, &here, 1, &there, 1, 0);
        if (moved <= 0) return false;
        local += moved;
        address += static_cast<uint64_t>(moved);
        length -= static_cast<uint64_t>(moved);
    }
    return true;
}

}  // namespace

bool read_rank_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length)
{
    return transfer_all(process_vm_readv, pid, address, buffer, length);
}

bool write_interposer_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length)
{
    return transfer_all(process_vm_writev, pid, address, const_cast<void*>(buffer), length);
}

bool write_rank_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length)
{
    // A rank waiting on this memory must read the write's date as soon as it can see the
    // write: the date first, then the bytes, then it holds time again
    // (scheduling/memory_waits.hpp).
    MemoryWrite write(pid);
    bool written = write_interposer_memory(pid, address, buffer, length);
    write.landed();
    return written;
}

}  // namespace s4bxi::sim
