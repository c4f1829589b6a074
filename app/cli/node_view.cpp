// kforge-cli show --session FILE --node ID: one node as a person reads it: what it is, how it fared,
// the decisions on it, and why the search chose to make it.
#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#include "search/selection_scores.h"
#include "store/session_store.h"
#include "util/error.h"

namespace kforge::cli {

void printNode(const SessionStore &store, int64_t nodeId)
{
    const auto d = store.nodeDetail(nodeId);
    if (!d)
        throw Error("'" + store.path() + "' has no node " + std::to_string(nodeId));
    const auto &n = d->node;
    std::printf("node %lld: %s %s\n", (long long)n.id, n.templateId.c_str(), n.status.c_str());
    if (n.parentId)
        std::printf("parent: #%lld (%s)\n", (long long)*n.parentId, n.expansion.c_str());
    std::printf("params: %s\n", n.params.dump().c_str());
    std::printf("summary: %s\n", n.summary.c_str());
    if (n.parentId && n.status != "running" && n.status != "interrupted")
        std::printf("speedup: %.3fx, reward %.3f\n", n.speedup, n.reward);
    if (!n.worker.empty())
        std::printf("evaluated by: %s%s\n", n.worker.c_str(), n.device.empty() ? "" : (" on " + n.device + ", candidate and baseline").c_str());
    if (!n.pruned.empty())
        std::printf("pruned: %s\n", n.pruned.c_str());
    for (const auto &dec : d->decisions)
        std::printf("decision: %s by %s: %s\n", dec.decision.c_str(), dec.actor.c_str(), dec.reason.c_str());
    const auto why = explainSelection(n.selection);
    std::printf("why chosen: %s\n", why.empty() ? (n.parentId ? "no selection scores stored (a session from before schema 6)"
                                                              : "the root: the ATen operator every candidate descends from")
                                                : why.c_str());
    if (!n.selection.empty())
        std::printf("selection scores: %s\n", n.selection.dump().c_str());
}

} // namespace kforge::cli
