// What the Portals calls and the NIC both do to a rank's Portals state: an entry unlinked,
// its handle released; the rank a process has on one of its NIs.
#include "portals/portals_state.hpp"

#include "run/registry.hpp"

namespace s4bxi::sim {

void forget_entry(RankPortals& owner, uint32_t index)
{
    owner.entries[index].reset();
    if (owner.mirror && index < wire::kMirroredEntries)
        wire::free_entry_slot(owner.mirror->entries[index], owner.mirror->replies.load(std::memory_order_relaxed));
}

void release_handle(RankPortals& owner, const ListEntryPtr& entry)
{
    uint32_t index = handle_index(entry->handle);
    if (index < owner.entries.size() && owner.entries[index] == entry) forget_entry(owner, index);
}

void unlink_entry(RankPortals& owner, NetworkInterface& ni, const ListEntryPtr& entry)
{
    if (entry->pending_append) {  // unlinked before its triggered append: it never will be
        entry->pending_append = false;
        release_handle(owner, entry);
        return;
    }
    if (!entry->linked) return;
    entry->linked = false;
    if (entry->pt_index < ni.table.size()) {
        PortalTableEntry& pt = ni.table[entry->pt_index];
        pt.priority.remove(entry);
        pt.overflow.remove(entry);
    }
    release_handle(owner, entry);
}

uint32_t own_rank(const RankPortals& p, const NetworkInterface& ni)
{
    return ni.rank_of(p.nid, ni.pid).value_or(static_cast<uint32_t>(p.rank->rank));
}

}  // namespace s4bxi::sim
