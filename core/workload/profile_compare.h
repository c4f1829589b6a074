#pragma once
// A workload profiled without and with a kernel pack (`kforge-cli profile WORKLOAD --pack PACK`): the
// same call patterns side by side, so a user sees which operators the pack changed and what the model
// gained where. The CLI prints it; the window's timeline marks the changed operators from it.
#include <set>
#include <string>
#include <vector>

#include "workload/workload_file.h"

namespace kforge {

struct ProfileChange {
    std::string signature; // the call pattern (CallGroup::signature)
    std::string op;        // its operator, "aten::softmax.int"
    int64_t callsBefore = 0, callsAfter = 0;
    double beforeUs = 0, afterUs = 0; // top-level time of the pattern in each profile
    // The pattern's operator, or one it calls, is one whose calls took the pack's kernel. The runtime
    // counts per operator, not per pattern, so a pattern whose calls all fell back is marked too when
    // another pattern of its operator took a kernel.
    bool byPack = false;
};

struct ProfileComparison {
    std::vector<ProfileChange> changes; // patterns of either profile, largest time before first
    double beforeUs = 0, afterUs = 0;    // all top-level time
};

// `takenOps` are the operators whose calls took a pack kernel (the counters' keys with taken > 0).
ProfileComparison compareProfiles(const WorkloadFile &before, const WorkloadFile &after, const std::set<std::string> &takenOps);
// The table `kforge-cli profile --pack` prints: the pack's operators first, then the rest, at most maxRows.
std::string comparisonTable(const ProfileComparison &c, size_t maxRows = 20);

} // namespace kforge
