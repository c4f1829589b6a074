#include "guard/verification.h"

#include <algorithm>

namespace kforge::guard {

bool finishVerification(Verdict &v, const EvalOptions &options)
{
    for (const auto &tr : v.trials)
        if (!tr.passed) {
            const bool seen = std::any_of(v.reasons.begin(), v.reasons.end(), [&](const Reason &r) { return r.code == tr.failure; });
            if (!seen)
                v.reasons.push_back({tr.failure, tr.label + " (" + tr.shape + "): " + tr.detail});
        }
    if (!v.reasons.empty()) {
        // A crash or a timeout inside a trial is what happened to the candidate, not a wrong answer.
        const auto &first = v.reasons.front().code;
        v.status = first == reason::Crashed ? VerdictStatus::Crashed
                 : first == reason::Timeout ? VerdictStatus::Timeout
                                            : VerdictStatus::Incorrect;
        return true;
    }
    if (!options.benchmark) {
        v.status = VerdictStatus::NotFaster;
        v.reasons.push_back({reason::NotFaster, "verified only; not benchmarked"});
        return true;
    }
    return false;
}

} // namespace kforge::guard
