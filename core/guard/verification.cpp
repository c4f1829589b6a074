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
        v.status = statusForFailure(v.reasons.front().code);
        return true;
    }
    if (!options.benchmark) {
        v.status = VerdictStatus::NotFaster;
        v.reasons.push_back({reason::NotFaster, "verified only; not benchmarked"});
        return true;
    }
    return false;
}

VerdictStatus statusForFailure(const std::string &code)
{
    return code == reason::Crashed ? VerdictStatus::Crashed : code == reason::Timeout ? VerdictStatus::Timeout : VerdictStatus::Incorrect;
}

} // namespace kforge::guard
