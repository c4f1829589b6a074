#include "search/reverify.h"

#include <map>

#include "util/error.h"

namespace kforge {

std::vector<int64_t> acceptedNodes(const SessionStore &store, int64_t sessionId)
{
    std::map<int64_t, const DecisionRecord *> latest; // a person's latest decision or the guard's revocation
    const auto decisions = store.decisions(sessionId);
    for (const auto &d : decisions)
        if (d.actor != "guard" || isRevocation(d))
            latest[d.nodeId] = &d;
    std::vector<int64_t> out;
    for (const auto &n : store.nodes(sessionId)) {
        if (!n.parentId)
            continue;
        const auto it = latest.find(n.id);
        const bool accepted = it != latest.end() ? it->second->decision == "accept" : n.status == "accepted";
        if (accepted)
            out.push_back(n.id);
    }
    return out;
}

Reverification reverifyNode(SessionStore &store, WorkerPool &pool, int64_t nodeId, uint64_t inputSeed, int deadlineMs)
{
    const auto detail = store.nodeDetail(nodeId);
    if (!detail)
        throw Error("'" + store.path() + "' has no node " + std::to_string(nodeId));
    const auto card = store.cardOf(detail->node);
    EvalOptions eo;
    eo.benchmark = false;
    eo.deadlineMs = deadlineMs;
    eo.inputSeed = inputSeed;
    const Verdict v = pool.evaluate(card, detail->candidate, eo);
    Reverification r;
    r.nodeId = nodeId;
    r.held = v.correct();
    const std::string seed = " (input seed " + std::to_string(inputSeed) + ")";
    if (r.held) {
        r.line = "node " + std::to_string(nodeId) + " held on re-verification" + seed;
        return r;
    }
    std::string why;
    for (const auto &t : v.trials)
        if (!t.passed) {
            why = "trial '" + t.label + "' (" + t.shape + ") failed: " + (t.detail.empty() ? t.failure : t.detail);
            break;
        }
    if (why.empty())
        why = v.reasons.empty() ? std::string("it did not pass (") + statusName(v.status) + ")" : v.reasons.front().message;
    const std::string reason = std::string(kRevokedPrefix) + seed + ": " + why;
    store.addDecision(nodeId, "reject", "guard", reason);
    r.line = "node " + std::to_string(nodeId) + " revoked: " + reason;
    return r;
}

} // namespace kforge
