#pragma once
// Which nodes of the tree a filter keeps: by status, template and proposer. A pure function over the
// snapshot's nodes so the rules are tested as a table. A node that fails the filter but has a
// descendant that passes stays visible, dimmed, so the path down to that descendant stays reachable
// (clickable, walkable with the arrow keys); the rest are dimmed or, in Hide mode, not drawn.
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/session_store.h"

namespace kforge::ui {

struct NodeFilter {
    std::set<std::string> statuses; // empty: any status
    std::string templateId;         // empty: any template
    std::string proposer;           // empty: any proposer (see proposerOf)
    bool hide = false;              // hide what fails instead of dimming it

    bool active() const { return !statuses.empty() || !templateId.empty() || !proposer.empty(); }
    bool matches(const NodeRecord &node, const std::string &sessionProposer) const;
};

// What made the node: "baseline" for the root; otherwise the session's proposer and whether the
// node improves a working parent or repairs a failed one ("templates · improve").
std::string proposerOf(const NodeRecord &node, const std::string &sessionProposer);

enum class FilterState { Shown, Dimmed, Hidden };

// Every node's state under the filter. Without an active filter everything is Shown.
std::unordered_map<int64_t, FilterState> applyFilter(const std::vector<NodeRecord> &nodes, const std::string &sessionProposer,
                                                     const NodeFilter &filter);

} // namespace kforge::ui
