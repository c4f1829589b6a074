#pragma once
// A worker backend evaluates candidates of one kind ("cpu", "cuda") against operator cards.
#include <string>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

namespace kforge::worker {

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    virtual nlohmann::json devices() const = 0;
    virtual Verdict evaluate(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options) = 0;
};

} // namespace kforge::worker
