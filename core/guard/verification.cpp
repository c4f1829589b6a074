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

std::optional<Reason> vacuousTrials(const Verdict &v, bool someReferenceFinite)
{
    if (v.trials.empty() || !v.trials.back().passed || someReferenceFinite)
        return std::nullopt;
    return Reason{reason::VacuousTrials, "the float64 reference was NaN or Inf in every element of every output on all "
                                             + std::to_string(v.trials.size())
                                             + " trials: nothing was compared, so the candidate cannot be shown correct"};
}

VerdictStatus statusForFailure(const std::string &code)
{
    return code == reason::Crashed ? VerdictStatus::Crashed : code == reason::Timeout ? VerdictStatus::Timeout : VerdictStatus::Incorrect;
}

} // namespace kforge::guard
