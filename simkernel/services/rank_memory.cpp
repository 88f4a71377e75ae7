#include "services/rank_memory.hpp"

#include "run/memory_write.hpp"
#include "run/registry.hpp"

namespace s4bxi::sim {

bool read_rank_memory(const RankRecord& rank, uint64_t address, void* buffer, uint64_t length)
{
    return rank.process().read_memory(rank.pid, address, buffer, length);
}

bool write_interposer_memory(const RankRecord& rank, uint64_t address, const void* buffer, uint64_t length)
{
    return rank.process().write_memory(rank.pid, address, buffer, length);
}

bool write_rank_memory(RankRecord& rank, uint64_t address, const void* buffer, uint64_t length)
{
    // A rank waiting on this memory must read the write's date as soon as it can see the
    // write: the date first, then the bytes, then it holds time again
    // (scheduling/memory_waits.hpp).
    MemoryWrite write(rank);
    bool written = write_interposer_memory(rank, address, buffer, length);
    write.landed();
    return written;
}

}  // namespace s4bxi::sim
