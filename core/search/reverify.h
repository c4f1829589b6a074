#pragma once
// Re-verification: an accepted node (by the guard or by a person) verified again, without timing, on
// inputs drawn from a seed of its own. A node shown wrong is revoked: the guard's `reject` decision
// with a reason naming the failed trial, which overrules every accept before it (pack export and the
// lessons skip it). The search re-verifies its accepted best once at the end; `kforge-cli reverify`
// any accepted node.
#include <cstdint>
#include <string>
#include <vector>

#include "pool/worker_pool.h"
#include "store/session_store.h"

namespace kforge {

struct Reverification {
    int64_t nodeId = 0;
    bool held = false;
    std::string line; // what happened, for a person: "node 7 held on re-verification (seed 12)" or the revocation
};

// The nodes of the session someone accepted (the guard's accepted verdict or a person's accept), whose
// latest person decision or revocation is not a reject, in id order.
std::vector<int64_t> acceptedNodes(const SessionStore &store, int64_t sessionId);
// Verifies the node again through `pool` and, when it fails, stores the revocation.
Reverification reverifyNode(SessionStore &store, WorkerPool &pool, int64_t nodeId, uint64_t inputSeed, int deadlineMs);

} // namespace kforge
