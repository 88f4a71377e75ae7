// Cross-memory copies to or from another process of this machine, whole: what the server
// does for a rank of its own machine (simkernel/host/process_access.cpp) and an agent for a
// rank of its (agent/process_service.cpp).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

namespace s4bxi {

namespace process_vm_detail {

// A cross-memory copy moves at most what the kernel takes at once: go on from there.
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

}  // namespace process_vm_detail

// False when not all `length` bytes could be copied (a bad address, the process gone).
inline bool read_process_memory(pid_t pid, uint64_t address, void* buffer, uint64_t length)
{
    return process_vm_detail::transfer_all(process_vm_readv, pid, address, buffer, length);
}

inline bool write_process_memory(pid_t pid, uint64_t address, const void* buffer, uint64_t length)
{
    return process_vm_detail::transfer_all(process_vm_writev, pid, address, const_cast<void*>(buffer), length);
}

}  // namespace s4bxi
