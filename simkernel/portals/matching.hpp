// Portals 4 matching rules, as pure functions (no simulation, no memory): which list entry
// accepts an incoming message, and how many bytes it takes.
#pragma once

#include <cstdint>
#include <optional>

namespace s4bxi::sim {

enum class Access { Put, Get, Atomic, FetchAtomic };

struct EntryCriteria {
    bool matching = true;         // ME (true) or LE (false)
    uint32_t options = 0;         // PTL_ME_* bits
    uint64_t length = 0;
    uint64_t managed_offset = 0;  // with PTL_ME_MANAGE_LOCAL
    uint64_t match_bits = 0;
    uint64_t ignore_bits = 0;
    uint32_t match_nid = 0;       // or PTL_NID_ANY
    uint32_t match_pid = 0;       // or PTL_PID_ANY
    uint32_t match_rank = 0;      // logical NIs; or PTL_RANK_ANY
    bool logical = false;
};

struct Incoming {
    Access access = Access::Put;
    uint64_t match_bits = 0;
    uint32_t nid = 0;
    uint32_t pid = 0;
    uint32_t rank = 0;  // logical NIs: the initiator's rank in the target NI's map
    uint64_t length = 0;
    uint64_t remote_offset = 0;
};

// True when the entry's match criteria (bits, source) accept the message.
bool criteria_match(const EntryCriteria& entry, const Incoming& message);

struct Placement {
    uint64_t offset;   // where in the entry the data goes
    uint64_t mlength;  // bytes that fit
};

// Where the message lands in an entry that matched, or nothing if it cannot be accepted
// there (NO_TRUNCATE and too long). Does not check permissions.
std::optional<Placement> place(const EntryCriteria& entry, const Incoming& message);

// PTL_ME_OP_PUT / PTL_ME_OP_GET permission for this kind of access.
bool access_permitted(uint32_t options, Access access);

// True when a MANAGE_LOCAL entry must be unlinked because less than min_free remains.
bool exhausted(uint64_t length, uint64_t managed_offset, uint64_t min_free);

}  // namespace s4bxi::sim
