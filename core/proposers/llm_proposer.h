#pragma once
// The `llm` proposer: asks a model for a candidate. From the root it asks for a first kernel; from a
// working parent, for a faster one; from a failed parent (within the search's repair budget, which
// MCTS keeps), for a repair with the parent's compile log or verification report. Every call is
// stored with its exact request and whole response, tokens and cost, on the node its reply became.
// A reply with no usable code is answered once more in the same conversation, asking for the code;
// a money budget, a refused key or an unknown model stops the search with that reason.
// The prompt describes the target device (what its worker reports and the hardware note for its
// architecture) and carries passages the knowledge base retrieves for the device, the operator's
// families and the parent's bottleneck, lessons of earlier searches of this operator first.
#include <functional>
#include <memory>
#include <vector>

#include "knowledge/knowledge_base.h"
#include "llm/client.h"
#include "llm/prices.h"
#include "proposers/proposer.h"
#include "store/llm_calls.h"

namespace kforge {

struct LlmProposerOptions {
    llm::ProviderConfig provider;
    std::string backend = "cpu";
    double budget = 0;            // money in the price table's currency; 0: none
    llm::PriceTable prices;       // PriceTable::load() by default (see the constructor)
    bool pricesGiven = false;     // false: the constructor loads the table
    bool stream = true;
    int maxTokens = 8192;
    double temperature = 0.4;
    int replyAttempts = 2;        // calls per proposal while replies hold no usable code
    int maxConsecutiveFailures = 3; // failed calls in a row (timeouts, server errors) before the search stops
    std::function<void(std::string_view)> onText; // streamed text, for a live view
    std::string knowledgeDir = knowledge::userDir(); // the user's notes and lessons beside the shipped ones; "": shipped only
    size_t passages = 5;          // knowledge passages per prompt
    size_t knowledgeCap = 6000;   // their bytes in the prompt
    nlohmann::json device;        // the target device, until the search tells it (target())
};

class LlmProposer : public Proposer {
public:
    // Throws Error when a budget is set and the model has no price (a budget cannot be kept blind).
    LlmProposer(SessionStore &store, LlmProposerOptions options);
    ~LlmProposer() override;

    std::string name() const override;
    std::optional<Proposal> propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng) override;
    void begin(int64_t sessionId, int64_t operatorId) override;
    void target(const nlohmann::json &device) override;
    void stored(int64_t nodeId) override;
    std::string stopReason() const override { return m_stop; }

    double spent() const { return m_spent; }
    std::string lastFailure() const override { return m_lastFailure; }
    // Malformed user notes left out, or why there is no knowledge base at all.
    const std::vector<std::string> &knowledgeProblems() const { return m_knowledgeProblems; }

private:
    int64_t record(const std::string &purpose, const llm::Exchange &ex, const llm::ChatReply *reply, const std::string &outcome,
                   const std::string &error);

    SessionStore &m_store;
    LlmProposerOptions m_options;
    llm::Client m_client;
    std::optional<llm::Price> m_price;
    std::unique_ptr<LlmCallLog> m_log;
    void loadKnowledge();

    std::optional<knowledge::KnowledgeBase> m_knowledge;
    bool m_knowledgeLoaded = false;
    std::vector<std::string> m_knowledgeProblems;
    int64_t m_sessionId = 0;
    int64_t m_operatorId = 0;
    std::vector<int64_t> m_pending; // calls of the last proposal, attached by stored()
    double m_spent = 0;
    int m_failuresInRow = 0;
    std::string m_stop;
    std::string m_lastFailure;
};

} // namespace kforge
