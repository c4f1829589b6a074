#pragma once
// A proposer makes a child candidate from a parent node: an improvement of a working parent, or a
// repair of a failed one. `templates` works offline; `llm` asks a model.
#include <cstdint>
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

    // The search tells a proposer where its proposals go: begin() once a run's root is stored, stored()
    // right after the last proposal became node `nodeId` (the llm proposer attaches its calls to it).
    // A non-empty stopReason() (a money budget spent) ends the search before the next proposal.
    virtual void begin(int64_t sessionId, int64_t operatorId) {}
    // The device the candidates run on (an element of a worker hello's "devices"; null when none
    // reported one), told before begin(): the llm proposer describes it in its prompt.
    virtual void target(const nlohmann::json &device) {}
    virtual void stored(int64_t nodeId) {}
    // A node of this operator already in the session (a resumed search), told before begin(): the
    // proposer proposes nothing it already made.
    virtual void known(const NodeRecord &node) {}
    // A node's result arrived (its status, speedup and reward set; its id and parent id too): the
    // template proposer moves from what was measured.
    virtual void finished(const NodeRecord &node) {}
    virtual std::string stopReason() const { return {}; }
    // Why the last propose() gave nothing, when that was a failure (an LLM call that failed or answered
    // no usable code) rather than nothing new to offer; empty otherwise. A search that runs out of
    // proposals says it, so a provider that cannot be reached is not reported as an exhausted space.
    virtual std::string lastFailure() const { return {}; }
    // A lesson made at another shape of this operator, re-made for `card`: the template proposer
    // renders the lesson's template at its point, or at the unseen valid point nearest it when that
    // one is not valid here or was made already, and counts it as proposed (but not as the template's
    // start: a guess from another shape never costs the template its own). nullopt when the lesson is
    // of no template this proposer has (the search then takes the lesson's own kernel), or the
    // template's whole space was made.
    virtual std::optional<Proposal> adapt(const OperatorCard &card, const std::string &templateId, const nlohmann::json &point,
                                          std::mt19937_64 &rng)
    {
        return std::nullopt;
    }
};

} // namespace kforge
