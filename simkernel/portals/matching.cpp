#include "portals/matching.hpp"

#include <portals4.h>

namespace s4bxi::sim {

bool criteria_match(const EntryCriteria& entry, const Incoming& message)
{
    if (!entry.matching) return true;
    if (((entry.match_bits ^ message.match_bits) & ~entry.ignore_bits) != 0) return false;
    if (entry.logical) return entry.match_rank == PTL_RANK_ANY || entry.match_rank == message.rank;
    bool nid_ok = entry.match_nid == PTL_NID_ANY || entry.match_nid == message.nid;
    bool pid_ok = entry.match_pid == PTL_PID_ANY || entry.match_pid == message.pid;
    return nid_ok && pid_ok;
}

std::optional<Placement> place(const EntryCriteria& entry, const Incoming& message)
{
    uint64_t offset = (entry.options & PTL_ME_MANAGE_LOCAL) ? entry.managed_offset : message.remote_offset;
    uint64_t room = offset < entry.length ? entry.length - offset : 0;
    if ((entry.options & PTL_ME_NO_TRUNCATE) && message.length > room) return std::nullopt;
    return Placement{offset, message.length < room ? message.length : room};
}

bool access_permitted(uint32_t options, Access access)
{
    switch (access) {
    case Access::Put:
    case Access::Atomic: return options & PTL_ME_OP_PUT;
    case Access::Get: return options & PTL_ME_OP_GET;
    case Access::FetchAtomic: return (options & PTL_ME_OP_PUT) && (options & PTL_ME_OP_GET);
    }
    return false;
}

bool exhausted(uint64_t length, uint64_t managed_offset, uint64_t min_free)
{
    return managed_offset > length || length - managed_offset < min_free;
}

}  // namespace s4bxi::sim
