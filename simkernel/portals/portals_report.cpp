#include "portals/portals_report.hpp"

#include <fmt/format.h>

namespace s4bxi::sim {

std::string describe_portals_state(const RankPortals& p)
{
    std::string text;
    for (const NetworkInterface& ni : p.nis) {
        if (!ni.used) continue;
        std::string line;
        for (size_t i = 0; i < p.eqs.size(); ++i) {
            const EventQueue& q = p.eqs[i];
            if (!q.used || q.ni != ni.index || q.size() == 0) continue;
            line += fmt::format("; eq {}: {} events, the first visible at {:.9f} s", i, q.size(), q.front()->visible_at);
        }
        for (size_t index = 0; index < ni.table.size(); ++index) {
            const PortalTableEntry& pt = ni.table[index];
            if (!pt.allocated) continue;
            if (!pt.enabled) line += fmt::format("; pt {} disabled", index);
            if (!pt.unexpected.empty() || pt.overflow.size() > 64 || pt.priority.size() > 64)
                line += fmt::format("; pt {}: {} priority and {} overflow entries, {} unexpected headers", index,
                                    pt.priority.size(), pt.overflow.size(), pt.unexpected.size());
        }
        if (!line.empty()) text += fmt::format("\n    NI {} (pid {}){}", ni.index, ni.pid, line);
    }
    return text;
}

}  // namespace s4bxi::sim
