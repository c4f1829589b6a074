#pragma once
// A selection's scores as the search stores them on the node it makes (NodeRecord::selection), and the
// one sentence that says why that node's parent was expanded, for the CLI's node view and the window's
// inspector alike.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "search/mcts.h"

namespace kforge {

// `expanded` is the stored id of the node that grows the child; `expandedParent` that of its parent
// (0 for the root).
nlohmann::json selectionJson(const Selection &s, const MctsParams &p, int64_t expanded, int64_t expandedParent);
// The scores of a choice that bypassed UCT: "warm_start" (a lesson goes first) or "diverse_root".
nlohmann::json ruleJson(const std::string &rule, const std::string &detail);
// Why a subtree was pruned as a dead end, with the stored ids of it and its best sibling.
std::string pruneReason(const Prune &p, int64_t siblingId, const MctsParams &params);
// "Chosen because ..." from the stored scores, then "Made: ..." with what the proposer made (its
// rationale, stored as "made"); "" for a node with neither (the root, an older session).
std::string explainSelection(const nlohmann::json &scores);

} // namespace kforge
