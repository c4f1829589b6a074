#pragma once
// A proposer makes a child candidate from a parent node: an improvement of a working parent, or a
// repair of a failed one. `templates` works offline; `llm` (later) asks a model.
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "store/session_store.h"

namespace kforge {

struct Proposal {
    std::string templateId;
    nlohmann::json params = nlohmann::json::object();
    Candidate candidate;
    std::string rationale; // one line: what changed and why
};

class Proposer {
public:
    virtual ~Proposer() = default;
    virtual std::string name() const = 0;
    // parent == nullptr asks for a first attempt. Returns nullopt when it has nothing new to offer from
    // this parent.
    virtual std::optional<Proposal> propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng) = 0;
};

} // namespace kforge
