#include "ui/node_filter.h"

#include <unordered_set>

namespace kforge::ui {

std::string proposerOf(const NodeRecord &node, const std::string &sessionProposer)
{
    if (!node.parentId)
        return "baseline";
    const std::string who = sessionProposer.empty() ? std::string("unknown") : sessionProposer;
    return who + " \u00b7 " + (node.expansion == "repair" ? "repair" : "improve");
}

bool NodeFilter::matches(const NodeRecord &node, const std::string &sessionProposer) const
{
    if (!statuses.empty() && !statuses.count(node.status))
        return false;
    if (!templateId.empty() && node.templateId != templateId)
        return false;
    if (!proposer.empty() && proposerOf(node, sessionProposer) != proposer)
        return false;
    return true;
}

std::unordered_map<int64_t, FilterState> applyFilter(const std::vector<NodeRecord> &nodes, const std::string &sessionProposer,
                                                     const NodeFilter &filter)
{
    std::unordered_map<int64_t, FilterState> out;
    out.reserve(nodes.size());
    if (!filter.active()) {
        for (const auto &n : nodes)
            out[n.id] = FilterState::Shown;
        return out;
    }
    std::unordered_map<int64_t, const NodeRecord *> byId;
    for (const auto &n : nodes)
        byId[n.id] = &n;
    const FilterState failed = filter.hide ? FilterState::Hidden : FilterState::Dimmed;
    for (const auto &n : nodes)
        out[n.id] = filter.matches(n, sessionProposer) ? FilterState::Shown : failed;
    if (!filter.hide)
        return out;
    // Ancestors of a shown node stay reachable. Each walk stops at the first ancestor already made
    // visible, so the whole pass is linear; the visited set guards a damaged file's cycles.
    for (const auto &n : nodes) {
        if (out[n.id] != FilterState::Shown)
            continue;
        std::unordered_set<int64_t> seen{n.id};
        for (auto p = n.parentId; p && seen.insert(*p).second;) {
            auto it = byId.find(*p);
            if (it == byId.end())
                break;
            auto &state = out[*p];
            if (state != FilterState::Hidden)
                break;
            state = FilterState::Dimmed;
            p = it->second->parentId;
        }
    }
    return out;
}

} // namespace kforge::ui
