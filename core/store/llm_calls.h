#pragma once
// The LLM calls of a session (schema 5): for every call the exact request body sent and the whole
// response received (both redacted), the prompt's purpose, the tokens, the cost and how it ended;
// attached to the node the reply became, or to none when no candidate came of it. Totals per node,
// operator and session.
//
// The log has its own connection to the session file, so the records stay out of SessionStore's
// header (the proposer and the UI include this one only where they need calls).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace kforge {

class SessionStore;

struct LlmCallRecord {
    int64_t id = 0;
    int64_t sessionId = 0;
    std::optional<int64_t> operatorId;
    std::optional<int64_t> nodeId;
    std::string provider;
    std::string model;
    std::string purpose;     // "first", "improve", "repair", "reformat"
    std::string url;
    std::string request;     // the body exactly as sent (redacted)
    std::string response;    // the body exactly as received; for a stream, its events (redacted)
    std::string replyText;   // the model's text, joined from the stream
    std::string outcome;     // "ok" or an llm::ErrorKind name, or a reply failure ("no_code", ...)
    std::string error;       // what went wrong, in words (redacted)
    int64_t inputTokens = 0;
    int64_t outputTokens = 0;
    double cost = 0;         // in the price table's currency
    bool priced = true;      // false: no price was known, cost is 0
    int attempts = 0;
    double millis = 0;
    double createdAt = 0;
};

struct LlmTotals {
    int calls = 0;
    int64_t inputTokens = 0;
    int64_t outputTokens = 0;
    double cost = 0;
    int unpriced = 0; // calls whose cost is unknown
};

class LlmCallLog {
public:
    // Opens the session file `store` has open (a writer has migrated it); `writable` as the store is.
    LlmCallLog(const SessionStore &store, bool writable);
    ~LlmCallLog();
    LlmCallLog(const LlmCallLog &) = delete;
    LlmCallLog &operator=(const LlmCallLog &) = delete;

    int64_t add(const LlmCallRecord &call);
    // Calls made for a proposal, attached to the node it became.
    void attach(const std::vector<int64_t> &callIds, int64_t nodeId);

    std::vector<LlmCallRecord> calls(int64_t sessionId) const;
    std::vector<LlmCallRecord> nodeCalls(int64_t nodeId) const;
    LlmTotals nodeTotals(int64_t nodeId) const;
    LlmTotals operatorTotals(int64_t operatorId) const;
    LlmTotals sessionTotals(int64_t sessionId) const;

private:
    std::vector<LlmCallRecord> query(const char *where, int64_t id) const;
    LlmTotals totals(const char *where, int64_t id) const;

    sqlite3 *m_db = nullptr;
    bool m_writable = false;
    std::string m_path;
};

} // namespace kforge
