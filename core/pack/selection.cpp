#include "pack/selection.h"

#include <map>

#include "util/error.h"

namespace kforge::pack {

namespace {

bool shippable(const std::string &status)
{
    return status == "accepted" || status == "not_faster" || status == "incorrect" || status == "suspect" || status == "timeout"
        || status == "crashed";
}

} // namespace

std::vector<PackChoice> choosePackNodes(const SessionStore &store, int64_t sessionId, const std::vector<std::string> &operatorKeys)
{
    std::map<int64_t, const DecisionRecord *> person; // latest decision of a person (or revocation) per node
    const auto decisions = store.decisions(sessionId); // oldest first
    for (const auto &d : decisions)
        if (d.actor != "guard" || isRevocation(d)) // a node revoked on re-verification is out, whoever accepted it
            person[d.nodeId] = &d;
    const auto nodes = store.nodes(sessionId);
    std::vector<PackChoice> out;
    std::vector<bool> keyUsed(operatorKeys.size(), false);
    for (const auto &op : store.operators(sessionId)) {
        if (!operatorKeys.empty()) {
            bool wanted = false;
            for (size_t i = 0; i < operatorKeys.size(); ++i)
                if (operatorKeys[i] == op.card.key || operatorKeys[i] == op.card.atenOp) {
                    wanted = true;
                    keyUsed[i] = true;
                }
            if (!wanted)
                continue;
        }
        PackChoice c{op, std::nullopt, {}};
        const NodeRecord *best = nullptr;
        std::string how;
        for (const auto &n : nodes) {
            if (n.operatorId != op.id || !n.parentId || !shippable(n.status))
                continue;
            const auto p = person.find(n.id);
            const bool personAccepted = p != person.end() && p->second->decision == "accept";
            const bool personRejected = p != person.end() && p->second->decision == "reject";
            if (personRejected || (n.status != "accepted" && !personAccepted))
                continue;
            if (!best || n.speedup > best->speedup) {
                best = &n;
                how = personAccepted ? "accepted by a person (" + p->second->reason + ")" : "accepted by the guard";
            }
        }
        if (best) {
            c.node = store.nodeDetail(best->id);
            c.why = "node " + std::to_string(best->id) + ", " + how;
        } else {
            c.why = "no node the guard accepted and no person rejected, and none a person accepted";
        }
        out.push_back(std::move(c));
    }
    for (size_t i = 0; i < operatorKeys.size(); ++i)
        if (!keyUsed[i])
            throw Error("the session has no operator '" + operatorKeys[i] + "' (give a card key or an ATen operator name)");
    return out;
}

} // namespace kforge::pack
