#include "store/llm_calls.h"

#include <sqlite3.h>

#include "store/session_store.h"
#include "store/sqlite_util.h"
#include "util/error.h"

namespace kforge {

namespace {

constexpr const char *kColumns =
    "id, session_id, operator_id, node_id, provider, model, purpose, url, request, response, reply_text, outcome, error, "
    "input_tokens, output_tokens, cost, priced, attempts, millis, created_at";

} // namespace

LlmCallLog::LlmCallLog(const SessionStore &store, bool writable) : m_writable(writable), m_path(store.path())
{
    const int flags = (writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_FULLMUTEX;
    if (sqlite3_open_v2(m_path.c_str(), &m_db, flags, nullptr) != SQLITE_OK) {
        std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error("cannot open the LLM calls of session '" + m_path + "': " + msg);
    }
    sqlite3_busy_timeout(m_db, 5000);
    if (store.schemaVersion() < 5) {
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error("session '" + m_path + "' has no LLM call log (schema " + std::to_string(store.schemaVersion()) + ", the log came in 5)");
    }
}

LlmCallLog::~LlmCallLog()
{
    sqlite3_close(m_db);
}

int64_t LlmCallLog::add(const LlmCallRecord &c)
{
    if (!m_writable)
        throw Error("session '" + m_path + "' is open read-only");
    sql::Statement s(m_db, "INSERT INTO llm_calls(session_id, operator_id, node_id, provider, model, purpose, url, request, response, "
                           "reply_text, outcome, error, input_tokens, output_tokens, cost, priced, attempts, millis, created_at) "
                           "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    s.bind(1, c.sessionId).bind(2, c.operatorId).bind(3, c.nodeId).bind(4, c.provider).bind(5, c.model).bind(6, c.purpose);
    s.bind(7, c.url).bind(8, c.request).bind(9, c.response).bind(10, c.replyText).bind(11, c.outcome).bind(12, c.error);
    s.bind(13, c.inputTokens).bind(14, c.outputTokens).bind(15, c.cost).bind(16, int64_t(c.priced ? 1 : 0)).bind(17, c.attempts);
    s.bind(18, c.millis).bind(19, c.createdAt > 0 ? c.createdAt : nowSeconds());
    s.run();
    return sqlite3_last_insert_rowid(m_db);
}

void LlmCallLog::attach(const std::vector<int64_t> &callIds, int64_t nodeId)
{
    if (!m_writable)
        throw Error("session '" + m_path + "' is open read-only");
    sql::Statement s(m_db, "UPDATE llm_calls SET node_id = ? WHERE id = ?");
    for (auto id : callIds) {
        s.reset();
        s.bind(1, nodeId).bind(2, id).run();
    }
}

std::vector<LlmCallRecord> LlmCallLog::query(const char *where, int64_t id) const
{
    const std::string q = std::string("SELECT ") + kColumns + " FROM llm_calls WHERE " + where + " = ? ORDER BY id";
    sql::Statement s(m_db, q.c_str());
    s.bind(1, id);
    std::vector<LlmCallRecord> out;
    while (s.step()) {
        LlmCallRecord c;
        int i = 0;
        c.id = s.integer(i++);
        c.sessionId = s.integer(i++);
        if (!s.isNull(i))
            c.operatorId = s.integer(i);
        ++i;
        if (!s.isNull(i))
            c.nodeId = s.integer(i);
        ++i;
        c.provider = s.text(i++);
        c.model = s.text(i++);
        c.purpose = s.text(i++);
        c.url = s.text(i++);
        c.request = s.text(i++);
        c.response = s.text(i++);
        c.replyText = s.text(i++);
        c.outcome = s.text(i++);
        c.error = s.text(i++);
        c.inputTokens = s.integer(i++);
        c.outputTokens = s.integer(i++);
        c.cost = s.real(i++);
        c.priced = s.integer(i++) != 0;
        c.attempts = int(s.integer(i++));
        c.millis = s.real(i++);
        c.createdAt = s.real(i++);
        out.push_back(std::move(c));
    }
    return out;
}

LlmTotals LlmCallLog::totals(const char *where, int64_t id) const
{
    const std::string q = std::string("SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
                                      "COALESCE(SUM(cost), 0), COALESCE(SUM(1 - priced), 0) FROM llm_calls WHERE ")
                          + where + " = ?";
    sql::Statement s(m_db, q.c_str());
    s.bind(1, id);
    LlmTotals t;
    if (s.step()) {
        t.calls = int(s.integer(0));
        t.inputTokens = s.integer(1);
        t.outputTokens = s.integer(2);
        t.cost = s.real(3);
        t.unpriced = int(s.integer(4));
    }
    return t;
}

std::vector<LlmCallRecord> LlmCallLog::calls(int64_t sessionId) const { return query("session_id", sessionId); }
std::vector<LlmCallRecord> LlmCallLog::nodeCalls(int64_t nodeId) const { return query("node_id", nodeId); }
LlmTotals LlmCallLog::nodeTotals(int64_t nodeId) const { return totals("node_id", nodeId); }
LlmTotals LlmCallLog::operatorTotals(int64_t operatorId) const { return totals("operator_id", operatorId); }
LlmTotals LlmCallLog::sessionTotals(int64_t sessionId) const { return totals("session_id", sessionId); }

} // namespace kforge
