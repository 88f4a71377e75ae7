// The handles of the rank's list entries. The rank chooses the handle of every ME or LE
// it appends (wire::EntrySlot, in its mirror) and the server adopts it: an append whose
// arguments the rank checked can then be posted without waiting for the server to answer
// it with a handle (posted_commands.hpp). The server frees a slot when its entry goes (an
// unlink, a use-once entry consumed, PtlNIFini) while the rank runs; the rank sees the
// free only from its next reply, so that it chooses the same handles from one run to the
// next, and until then counts the entry as the server's, which keeps its counts of entries
// upper bounds of the server's.
#pragma once

#include <cstdint>

namespace s4bxi::interpose::entry_handles {

// Takes the lowest slot the rank knows to be free, for an entry appended on NI `ni`, portal
// table entry `pt_index`, and returns its ME (or LE) handle; 0 when the rank knows of no
// free slot, for the server to choose one past them.
uint32_t choose(bool is_le, uint32_t ni, uint32_t pt_index);

// The append that was to use `handle` (0: none) failed: the server never held it.
void give_back(uint32_t handle);

// An append succeeded with `given`, where the rank had chosen `chosen`: a handle the server
// chose is an entry the rank's counts leave out, and it posts no append from then on.
void adopted(uint32_t chosen, uint32_t given);

// True when the server, serving the append of `handle` (just chosen), cannot refuse it for
// room: the rank holds fewer than `max_entries` other entries, and fewer than
// `max_list_size` on the same portal table entry, counting as held every one whose free it
// has not seen yet (PTL_NO_SPACE, PTL_LIST_TOO_LONG).
bool room_for(uint32_t handle, uint64_t max_entries, uint64_t max_list_size);

}  // namespace s4bxi::interpose::entry_handles
