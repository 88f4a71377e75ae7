#include "portals/entry_handles.hpp"

#include <mutex>

#include "channel/channel_client.hpp"
#include "rank/rank_state.hpp"
#include "s4bxi/mirror.hpp"

namespace s4bxi::interpose::entry_handles {
namespace {

// The handle kinds of portals_state.hpp (simkernel): the kind in the top bits.
constexpr uint32_t kMeKind = 4u << wire::kHandleIndexBits;
constexpr uint32_t kLeKind = 5u << wire::kHandleIndexBits;

// Any thread of the rank appends; the slots are the rank's to take, the server's to free.
std::mutex g_mutex;
// The server chose a handle past the slots: an entry no slot counts. Lost at an exec,
// which would take more than kMirroredEntries appends not yet seen freed to matter.
bool g_server_chose = false;

}  // namespace

uint32_t choose(bool is_le, uint32_t ni, uint32_t pt_index)
{
    uint64_t replies = 0;
    wire::Mirror* mirror = entry_mirror(replies);
    if (!mirror) return 0;
    std::lock_guard lock(g_mutex);
    uint32_t used = mirror->entry_slots_used.load(std::memory_order_relaxed);
    uint32_t index = 0;
    while (index < used && !wire::entry_slot_free(mirror->entries[index], replies)) ++index;
    if (index >= wire::kMirroredEntries) return 0;
    if (index == used) mirror->entry_slots_used.store(used + 1, std::memory_order_relaxed);
    wire::EntrySlot& slot = mirror->entries[index];
    slot.ni = ni & wire::kHandleIndexMask;
    slot.pt_index = pt_index;
    uint32_t handle = (is_le ? kLeKind : kMeKind) | index;
    slot.handle.store(handle, std::memory_order_release);
    return handle;
}

void give_back(uint32_t handle)
{
    uint64_t replies = 0;
    wire::Mirror* mirror = entry_mirror(replies);
    uint32_t index = handle & wire::kHandleIndexMask;
    if (!mirror || handle == 0 || index >= wire::kMirroredEntries) return;
    std::lock_guard lock(g_mutex);
    uint32_t expected = handle;
    mirror->entries[index].handle.compare_exchange_strong(expected, 0, std::memory_order_release);
}

void adopted(uint32_t chosen, uint32_t given)
{
    if (given == chosen) return;
    std::lock_guard lock(g_mutex);
    g_server_chose = true;
}

bool room_for(uint32_t handle, uint64_t max_entries, uint64_t max_list_size)
{
    uint64_t replies = 0;
    wire::Mirror* mirror = entry_mirror(replies);
    if (!mirror) return false;
    std::lock_guard lock(g_mutex);
    if (g_server_chose) return false;
    uint32_t used = mirror->entry_slots_used.load(std::memory_order_relaxed);
    // The other slots taken bound both counts: the usual case, with no scan.
    uint64_t others = used - 1;
    if (others < max_entries && others < max_list_size) return true;
    uint32_t index = handle & wire::kHandleIndexMask;
    const wire::EntrySlot& own = mirror->entries[index];
    uint64_t held = 0, on_list = 0;
    for (uint32_t i = 0; i < used; ++i) {
        const wire::EntrySlot& slot = mirror->entries[i];
        if (i == index || wire::entry_slot_free(slot, replies)) continue;
        ++held;
        if (slot.ni == own.ni && slot.pt_index == own.pt_index) ++on_list;
    }
    return held < max_entries && on_list < max_list_size;
}

}  // namespace s4bxi::interpose::entry_handles
