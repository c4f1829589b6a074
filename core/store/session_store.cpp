#include "store/session_store.h"

#include <chrono>
#include <filesystem>
#include <sqlite3.h>

#include "store/schema.h"
#include "store/sqlite_util.h"
#include "util/error.h"

namespace kforge {

double nowSeconds()
{
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
}

bool isRevocation(const DecisionRecord &d)
{
    return d.actor == "guard" && d.decision == "reject" && d.reason.rfind(kRevokedPrefix, 0) == 0;
}

namespace {

// Checks a file before anything may write to it. Returns its schema version (0 for a new, empty file).
int inspect(sqlite3 *db, const std::string &path)
{
    int64_t appId = 0, version = 0, tables = 0;
    try {
        appId = sql::pragmaInt(db, "application_id");
        version = sql::pragmaInt(db, "user_version");
        sql::Statement s(db, "SELECT count(*) FROM sqlite_master");
        s.step();
        tables = s.integer(0);
    } catch (const Error &e) {
        // SQLite reads the header of a file cut short or written over, then finds its pages malformed.
        if (std::string(e.what()).find("malformed") != std::string::npos)
            throw Error("'" + path + "' is damaged: its database is malformed (cut short or written over; " + e.what()
                        + "). It was not changed; open a copy made before the damage");
        throw Error("'" + path + "' is not a kforge session: it is not a SQLite database (" + e.what() + ")");
    }
    if (appId == 0 && tables == 0 && version == 0)
        return 0;
    if (appId != schema::kApplicationId)
        throw Error("'" + path + "' is not a kforge session: it is a SQLite database of another application"
                    + (tables ? " (" + std::to_string(tables) + " tables)" : std::string()));
    if (version > schema::kCurrentVersion)
        throw Error("'" + path + "' was written by a newer kforge (session schema " + std::to_string(version)
                    + "; this build reads up to " + std::to_string(schema::kCurrentVersion)
                    + "). Upgrade kforge to open it; the file was not changed.");
    return int(version);
}

std::string reasonsJson(const std::vector<Reason> &reasons)
{
    nlohmann::json j = nlohmann::json::array();
    for (const auto &r : reasons)
        j.push_back({{"code", r.code}, {"message", r.message}});
    return j.dump();
}

std::vector<Reason> reasonsFrom(const std::string &text)
{
    std::vector<Reason> out;
    for (const auto &r : nlohmann::json::parse(text.empty() ? "[]" : text))
        out.push_back({r.value("code", ""), r.value("message", "")});
    return out;
}

constexpr const char *kNodeColumns =
    "id, session_id, operator_id, parent_id, status, template, params_json, speedup, reward, noise, roofline_us, "
    "reasons_json, summary, worker, created_at, finished_at, "
    "(SELECT kind FROM edges WHERE child_id = nodes.id), selection_json, pruned, device";

NodeRecord readNode(const sql::Statement &s)
{
    NodeRecord n;
    n.id = s.integer(0);
    n.sessionId = s.integer(1);
    n.operatorId = s.integer(2);
    if (!s.isNull(3))
        n.parentId = s.integer(3);
    n.status = s.text(4);
    n.templateId = s.text(5);
    n.params = nlohmann::json::parse(s.text(6));
    n.speedup = s.real(7);
    n.reward = s.real(8);
    n.noise = s.real(9);
    n.rooflineUs = s.real(10);
    n.reasons = reasonsFrom(s.text(11));
    n.summary = s.text(12);
    n.worker = s.text(13);
    n.createdAt = s.real(14);
    if (!s.isNull(15))
        n.finishedAt = s.real(15);
    n.expansion = s.isNull(16) ? "root" : s.text(16);
    n.selection = nlohmann::json::parse(s.text(17), nullptr, false);
    if (!n.selection.is_object())
        n.selection = nlohmann::json::object();
    n.pruned = s.text(18);
    n.device = s.text(19);
    return n;
}

} // namespace

int SessionStore::fileSchemaVersion(const std::string &path)
{
    if (!std::filesystem::exists(path))
        throw Error("cannot open session '" + path + "': no such file");
    sqlite3 *probe = nullptr;
    if (sqlite3_open_v2(path.c_str(), &probe, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::string msg = probe ? sqlite3_errmsg(probe) : "out of memory";
        sqlite3_close(probe);
        throw Error("cannot open session '" + path + "': " + msg);
    }
    try {
        const int version = inspect(probe, path);
        sqlite3_close(probe);
        return version;
    } catch (...) {
        sqlite3_close(probe);
        throw;
    }
}

int SessionStore::currentSchemaVersion()
{
    return schema::kCurrentVersion;
}

SessionStore::SessionStore(const std::string &path, Mode mode) : m_path(path), m_mode(mode)
{
    const bool exists = std::filesystem::exists(path);
    if (mode == Mode::ReadOnly && !exists)
        throw Error("cannot open session '" + path + "': no such file");
    if (exists && std::filesystem::is_directory(path))
        throw Error("cannot open session '" + path + "': it is a folder");
    // Inspect through a read-only connection first, so a refused file is never touched (not even its
    // journal mode).
    if (exists) {
        sqlite3 *probe = nullptr;
        if (sqlite3_open_v2(path.c_str(), &probe, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
            std::string msg = probe ? sqlite3_errmsg(probe) : "out of memory";
            sqlite3_close(probe);
            throw Error("cannot open session '" + path + "': " + msg);
        }
        try {
            const int version = inspect(probe, path);
            if (mode == Mode::ReadOnly && version == 0)
                throw Error("'" + path + "' is empty: no kforge session has been written to it yet "
                            "(kforge-cli search --session FILE writes one)");
            if (mode == Mode::ReadOnly && version < schema::kCurrentVersion)
                throw Error("'" + path + "' was written by an older kforge (session schema " + std::to_string(version)
                            + "; this build reads " + std::to_string(schema::kCurrentVersion)
                            + "). Opening it for writing upgrades it in place: kforge offers to when you open it, "
                              "and kforge-cli decide does when it records a decision in it.");
        } catch (...) {
            sqlite3_close(probe);
            throw;
        }
        sqlite3_close(probe);
    }
    const int flags = mode == Mode::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (sqlite3_open_v2(path.c_str(), &m_db, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
        std::string msg = m_db ? sqlite3_errmsg(m_db) : "out of memory";
        sqlite3_close(m_db);
        m_db = nullptr;
        throw Error("cannot open session '" + path + "': " + msg);
    }
    sqlite3_busy_timeout(m_db, 5000);
    try {
        if (mode == Mode::ReadWrite) {
            sql::exec(m_db, "PRAGMA journal_mode = WAL");
            sql::exec(m_db, "PRAGMA synchronous = NORMAL");
            sql::exec(m_db, "PRAGMA foreign_keys = ON");
            schema::migrate(m_db);
        }
    } catch (...) {
        sqlite3_close(m_db);
        m_db = nullptr;
        throw;
    }
}

SessionStore::~SessionStore()
{
    sqlite3_close(m_db);
}

int SessionStore::schemaVersion() const
{
    return int(sql::pragmaInt(m_db, "user_version"));
}

void SessionStore::requireWritable() const
{
    if (m_mode != Mode::ReadWrite)
        throw Error("session '" + m_path + "' is open read-only");
}

int64_t SessionStore::createSession(const SessionInfo &info)
{
    requireWritable();
    sql::Statement s(m_db, "INSERT INTO sessions(name, workload, backend, proposer, options_json, status, created_at) "
                           "VALUES(?,?,?,?,?,?,?)");
    s.bind(1, info.name).bind(2, info.workload).bind(3, info.backend).bind(4, info.proposer).bind(5, info.options.dump());
    s.bind(6, info.status.empty() ? std::string("running") : info.status).bind(7, info.createdAt > 0 ? info.createdAt : nowSeconds());
    s.run();
    return sqlite3_last_insert_rowid(m_db);
}

void SessionStore::setSessionStatus(int64_t sessionId, const std::string &status)
{
    requireWritable();
    sql::Statement s(m_db, "UPDATE sessions SET status = ? WHERE id = ?");
    s.bind(1, status).bind(2, sessionId).run();
}

void SessionStore::setNodeStatus(int64_t nodeId, const std::string &status)
{
    requireWritable();
    sql::Statement s(m_db, "UPDATE nodes SET status = ? WHERE id = ?");
    s.bind(1, status).bind(2, nodeId).run();
}

void SessionStore::setNodePruned(int64_t nodeId, const std::string &reason)
{
    requireWritable();
    sql::Statement s(m_db, "UPDATE nodes SET pruned = ? WHERE id = ?");
    s.bind(1, reason).bind(2, nodeId).run();
}

void SessionStore::checkpoint()
{
    if (m_mode != Mode::ReadWrite || !m_db)
        return;
    // Everything from the -wal into the file itself, and the -wal emptied: the file alone is the session.
    // A reader holding an old snapshot makes it partial, which is no error.
    sqlite3_wal_checkpoint_v2(m_db, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
}

int64_t SessionStore::addOperator(int64_t sessionId, const OperatorCard &card)
{
    requireWritable();
    sql::Statement s(m_db, "INSERT INTO operators(session_id, key, card_json) VALUES(?,?,?)");
    s.bind(1, sessionId).bind(2, card.key).bind(3, nlohmann::json(card).dump()).run();
    return sqlite3_last_insert_rowid(m_db);
}

int64_t SessionStore::addNode(const NodeRecord &n, const Candidate &candidate)
{
    requireWritable();
    sql::exec(m_db, "BEGIN IMMEDIATE");
    try {
        sql::Statement s(m_db, "INSERT INTO nodes(session_id, operator_id, parent_id, status, template, params_json, "
                               "summary, created_at, selection_json) VALUES(?,?,?,?,?,?,?,?,?)");
        s.bind(1, n.sessionId).bind(2, n.operatorId).bind(3, n.parentId).bind(4, n.status).bind(5, n.templateId);
        s.bind(6, n.params.dump()).bind(7, n.summary).bind(8, n.createdAt > 0 ? n.createdAt : nowSeconds());
        s.bind(9, n.selection.is_object() ? n.selection.dump() : std::string("{}"));
        s.run();
        const int64_t id = sqlite3_last_insert_rowid(m_db);
        if (n.parentId) {
            sql::Statement e(m_db, "INSERT INTO edges(child_id, parent_id, kind) VALUES(?,?,?)");
            e.bind(1, id).bind(2, *n.parentId).bind(3, n.expansion).run();
        }
        sql::Statement src(m_db, "INSERT INTO sources(node_id, backend, code, launch_json) VALUES(?,?,?,?)");
        src.bind(1, id).bind(2, candidate.backend).bind(3, candidate.source).bind(4, candidate.launch.dump()).run();
        sql::exec(m_db, "COMMIT");
        return id;
    } catch (...) {
        sql::exec(m_db, "ROLLBACK");
        throw;
    }
}

void SessionStore::finishNode(int64_t nodeId, const Verdict &v, double reward)
{
    requireWritable();
    sql::exec(m_db, "BEGIN IMMEDIATE");
    try {
        sql::Statement s(m_db, "UPDATE nodes SET status=?, speedup=?, reward=?, noise=?, roofline_us=?, reasons_json=?, "
                               "summary=?, worker=?, finished_at=?, device=? WHERE id=?");
        s.bind(1, statusName(v.status)).bind(2, v.speedup).bind(3, reward).bind(4, v.noise).bind(5, v.rooflineUs);
        s.bind(6, reasonsJson(v.reasons)).bind(7, v.summaryLine()).bind(8, v.worker).bind(9, nowSeconds()).bind(10, v.device);
        s.bind(11, nodeId);
        s.run();
        sql::Statement c(m_db, "INSERT OR REPLACE INTO compile_logs(node_id, ok, cached, millis, target, log, notes_json) "
                               "VALUES(?,?,?,?,?,?,?)");
        c.bind(1, nodeId).bind(2, int64_t(v.compile.ok)).bind(3, int64_t(v.compile.cached)).bind(4, v.compile.millis);
        c.bind(5, v.compile.target).bind(6, v.compile.log).bind(7, nlohmann::json(v.notes).dump()).run();
        // A node evaluated again (a resumed search) replaces what an earlier evaluation left.
        for (const char *sqlText : {"DELETE FROM verifications WHERE node_id = ?", "DELETE FROM timing_samples WHERE node_id = ?"})
            sql::Statement(m_db, sqlText).bind(1, nodeId).run();
        sql::Statement t(m_db, "INSERT INTO verifications(node_id, trial, label, shape, passed, max_abs_error, max_rel_error, "
                               "failure, detail, candidate_error, aten_error, allowed_error) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
        for (size_t i = 0; i < v.trials.size(); ++i) {
            const auto &tr = v.trials[i];
            t.reset();
            t.bind(1, nodeId).bind(2, int64_t(i)).bind(3, tr.label).bind(4, tr.shape).bind(5, int64_t(tr.passed));
            t.bind(6, tr.maxAbsError).bind(7, tr.maxRelError).bind(8, tr.failure).bind(9, tr.detail);
            t.bind(10, tr.candidateError).bind(11, tr.atenError).bind(12, tr.allowedError).run();
        }
        sql::Statement ts(m_db, "INSERT INTO timing_samples(node_id, role, idx, micros) VALUES(?,?,?,?)");
        for (auto [role, rep] : {std::pair{"candidate", &v.candidate}, std::pair{"baseline", &v.baseline}})
            for (size_t i = 0; i < rep->samplesUs.size(); ++i) {
                ts.reset();
                ts.bind(1, nodeId).bind(2, role).bind(3, int64_t(i)).bind(4, rep->samplesUs[i]).run();
            }
        sql::exec(m_db, "COMMIT");
    } catch (...) {
        sql::exec(m_db, "ROLLBACK");
        throw;
    }
}

int64_t SessionStore::addDecision(int64_t nodeId, const std::string &decision, const std::string &actor,
                                  const std::string &reason)
{
    requireWritable();
    if (decision != "accept" && decision != "reject")
        throw Error("a decision is 'accept' or 'reject', not '" + decision + "'");
    sql::Statement s(m_db, "INSERT INTO decisions(node_id, decision, actor, reason, created_at) VALUES(?,?,?,?,?)");
    s.bind(1, nodeId).bind(2, decision).bind(3, actor).bind(4, reason).bind(5, nowSeconds()).run();
    return sqlite3_last_insert_rowid(m_db);
}

void SessionStore::addWorkerEvent(int64_t sessionId, int slot, const std::string &kind, const std::string &detail)
{
    requireWritable();
    sql::Statement s(m_db, "INSERT INTO worker_events(session_id, slot, kind, detail, created_at) VALUES(?,?,?,?,?)");
    s.bind(1, sessionId).bind(2, int64_t(slot)).bind(3, kind).bind(4, detail).bind(5, nowSeconds()).run();
}

int64_t SessionStore::addProfile(int64_t nodeId, const nlohmann::json &report)
{
    requireWritable();
    sql::Statement s(m_db, "INSERT INTO profiles(node_id, tool, report_json, created_at) VALUES(?,?,?,?)");
    s.bind(1, nodeId).bind(2, report.value("tool", "unknown")).bind(3, report.dump()).bind(4, nowSeconds()).run();
    return sqlite3_last_insert_rowid(m_db);
}

std::vector<SessionInfo> SessionStore::sessions() const
{
    std::vector<SessionInfo> out;
    sql::Statement s(m_db, "SELECT id, name, workload, backend, proposer, options_json, status, created_at FROM sessions ORDER BY id");
    while (s.step())
        out.push_back({s.integer(0), s.text(1), s.text(2), s.text(3), s.text(4), s.text(6),
                       nlohmann::json::parse(s.text(5)), s.real(7)});
    return out;
}

std::vector<OperatorRecord> SessionStore::operators(int64_t sessionId) const
{
    std::vector<OperatorRecord> out;
    sql::Statement s(m_db, "SELECT id, session_id, card_json FROM operators WHERE session_id = ? ORDER BY id");
    s.bind(1, sessionId);
    while (s.step())
        out.push_back({s.integer(0), s.integer(1), nlohmann::json::parse(s.text(2)).get<OperatorCard>()});
    return out;
}

std::vector<NodeRecord> SessionStore::nodes(int64_t sessionId, int64_t afterId) const
{
    std::vector<NodeRecord> out;
    const std::string q = std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE session_id = ? AND id > ? ORDER BY id";
    sql::Statement s(m_db, q.c_str());
    s.bind(1, sessionId).bind(2, afterId);
    while (s.step())
        out.push_back(readNode(s));
    return out;
}

OperatorCard SessionStore::cardOf(const NodeRecord &node) const
{
    for (const auto &op : operators(node.sessionId))
        if (op.id == node.operatorId)
            return op.card;
    throw Error("node " + std::to_string(node.id) + " names an operator the session does not have");
}

std::optional<NodeDetail> SessionStore::nodeDetail(int64_t nodeId) const
{
    NodeDetail d;
    {
        const std::string q = std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE id = ?";
        sql::Statement s(m_db, q.c_str());
        s.bind(1, nodeId);
        if (!s.step())
            return std::nullopt;
        d.node = readNode(s);
    }
    {
        sql::Statement s(m_db, "SELECT backend, code, launch_json FROM sources WHERE node_id = ?");
        s.bind(1, nodeId);
        if (s.step())
            d.candidate = {s.text(0), s.text(1), nlohmann::json::parse(s.text(2))};
    }
    Verdict &v = d.verdict;
    // The root (the baseline) and nodes still in flight have no verdict of their own.
    // A node with no verdict yet: in flight, left in flight by a stopped search, or the baseline.
    const bool noVerdict = d.node.status == "running" || d.node.status == "interrupted" || d.node.status == "baseline";
    v.status = noVerdict ? VerdictStatus::Error : statusFromName(d.node.status);
    v.reasons = d.node.reasons;
    v.speedup = d.node.speedup;
    v.noise = d.node.noise;
    v.rooflineUs = d.node.rooflineUs;
    v.worker = d.node.worker;
    v.device = d.node.device;
    {
        sql::Statement s(m_db, "SELECT ok, cached, millis, target, log, notes_json FROM compile_logs WHERE node_id = ?");
        s.bind(1, nodeId);
        if (s.step()) {
            v.compile = {s.integer(0) != 0, s.integer(1) != 0, s.real(2), s.text(4), s.text(3)};
            v.notes = nlohmann::json::parse(s.text(5)).get<std::vector<std::string>>();
        }
    }
    {
        sql::Statement s(m_db, "SELECT label, shape, passed, max_abs_error, max_rel_error, failure, detail, "
                               "candidate_error, aten_error, allowed_error FROM verifications WHERE node_id = ? ORDER BY trial");
        s.bind(1, nodeId);
        while (s.step())
            v.trials.push_back({s.text(0), s.text(1), s.integer(2) != 0, s.real(3), s.real(4), s.text(5), s.text(6), s.real(7),
                                s.real(8), s.real(9)});
    }
    {
        sql::Statement s(m_db, "SELECT role, micros FROM timing_samples WHERE node_id = ? ORDER BY role, idx");
        s.bind(1, nodeId);
        while (s.step())
            (s.text(0) == "candidate" ? v.candidate : v.baseline).samplesUs.push_back(s.real(1));
        v.candidate.summary = summarize(v.candidate.samplesUs);
        v.baseline.summary = summarize(v.baseline.samplesUs);
    }
    {
        sql::Statement s(m_db, "SELECT id, node_id, decision, actor, reason, created_at FROM decisions WHERE node_id = ? ORDER BY id");
        s.bind(1, nodeId);
        while (s.step())
            d.decisions.push_back({s.integer(0), s.integer(1), s.text(2), s.text(3), s.text(4), s.real(5)});
    }
    {
        sql::Statement s(m_db, "SELECT report_json FROM profiles WHERE node_id = ? ORDER BY id DESC LIMIT 1");
        s.bind(1, nodeId);
        if (s.step())
            d.profile = nlohmann::json::parse(s.text(0));
    }
    return d;
}

std::vector<WorkerEventRecord> SessionStore::workerEvents(int64_t sessionId) const
{
    std::vector<WorkerEventRecord> out;
    sql::Statement s(m_db, "SELECT slot, kind, detail, created_at FROM worker_events WHERE session_id = ? ORDER BY id");
    s.bind(1, sessionId);
    while (s.step())
        out.push_back({int(s.integer(0)), s.text(1), s.text(2), s.real(3)});
    return out;
}

std::vector<DecisionRecord> SessionStore::decisions(int64_t sessionId) const
{
    std::vector<DecisionRecord> out;
    sql::Statement s(m_db, "SELECT d.id, d.node_id, d.decision, d.actor, d.reason, d.created_at FROM decisions d "
                           "JOIN nodes n ON n.id = d.node_id WHERE n.session_id = ? ORDER BY d.id");
    s.bind(1, sessionId);
    while (s.step())
        out.push_back({s.integer(0), s.integer(1), s.text(2), s.text(3), s.text(4), s.real(5)});
    return out;
}

std::vector<NodeTiming> SessionStore::candidateTimings(int64_t sessionId) const
{
    std::vector<NodeTiming> out;
    sql::Statement s(m_db, "SELECT t.node_id, t.micros FROM timing_samples t JOIN nodes n ON n.id = t.node_id "
                           "WHERE n.session_id = ? AND t.role = 'candidate' ORDER BY t.node_id, t.idx");
    s.bind(1, sessionId);
    std::vector<double> samples;
    int64_t current = 0;
    auto flush = [&] {
        if (!samples.empty())
            out.push_back({current, summarize(samples)});
        samples.clear();
    };
    while (s.step()) {
        if (s.integer(0) != current) {
            flush();
            current = s.integer(0);
        }
        samples.push_back(s.real(1));
    }
    flush();
    return out;
}

} // namespace kforge
