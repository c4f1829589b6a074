#pragma once
// Which node of a session goes into a pack for each operator: the fastest one the guard accepted and no
// person rejected, or that a person accepted (a person's latest decision on a node overrules the
// guard's either way). A node that has no program to ship (a compile error, an error, one still running,
// the baseline) is never taken, whatever was decided.
#include <optional>
#include <string>
#include <vector>

#include "store/session_store.h"

namespace kforge::pack {

struct PackChoice {
    OperatorRecord op;
    std::optional<NodeDetail> node; // empty: nothing to export for this operator
    std::string why;                // how it was chosen, or why there is none
};

// One choice per operator of the session, in the store's order. `operatorKeys` non-empty: only those
// operators (by card key or ATen operator name); a key that matches none throws Error.
std::vector<PackChoice> choosePackNodes(const SessionStore &store, int64_t sessionId, const std::vector<std::string> &operatorKeys = {});

} // namespace kforge::pack
