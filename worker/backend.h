#pragma once
// A worker backend evaluates candidates of one kind ("cpu", "cuda") against operator cards.
#include <string>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge::worker {

// After verification: each kind of trial failure becomes one reason (with the first trial that showed
// it); a candidate with failure reasons is Incorrect; a correct one that is not to be benchmarked is
// NotFaster with that said. Returns true when the verdict is final.
inline bool finishVerification(Verdict &v, const EvalOptions &options)
{
    for (const auto &tr : v.trials)
        if (!tr.passed) {
            bool seen = false;
            for (const auto &r : v.reasons)
                seen = seen || r.code == tr.failure;
            if (!seen)
                v.reasons.push_back({tr.failure, tr.label + " (" + tr.shape + "): " + tr.detail});
        }
    if (!v.reasons.empty()) {
        v.status = VerdictStatus::Incorrect;
        return true;
    }
    if (!options.benchmark) {
        v.status = VerdictStatus::NotFaster;
        v.reasons.push_back({reason::NotFaster, "verified only; not benchmarked"});
        return true;
    }
    return false;
}

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    virtual nlohmann::json devices() const = 0;
    virtual Verdict evaluate(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options) = 0;
};

} // namespace kforge::worker
