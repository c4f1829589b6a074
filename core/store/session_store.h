#pragma once
// One SQLite file per session (WAL). The search writes through one connection; the UI reads through
// its own read-only connection. A file that is not a kforge session, or was written by a newer
// kforge, is refused with a message saying which, and is never modified.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ops/operator_card.h"
#include "protocol/messages.h"
#include "protocol/verdict.h"

struct sqlite3;

namespace kforge {

struct SessionInfo {
    int64_t id = 0;
    std::string name;
    std::string workload;
    std::string backend;
    std::string proposer;
    std::string status; // "running", "finished", "stopped"
    nlohmann::json options = nlohmann::json::object();
    double createdAt = 0;
};

struct OperatorRecord {
    int64_t id = 0;
    int64_t sessionId = 0;
    OperatorCard card;
};

struct NodeRecord {
    int64_t id = 0;
    int64_t sessionId = 0;
    int64_t operatorId = 0;
    std::optional<int64_t> parentId;
    std::string expansion = "root"; // how it was made from its parent: "root", "improve", "repair"
    std::string status = "running"; // "running" while in flight, then a VerdictStatus name
    std::string templateId;
    nlohmann::json params = nlohmann::json::object();
    double speedup = 0;
    double reward = 0;
    double noise = 0;
    double rooflineUs = 0;
    std::vector<Reason> reasons;
    std::string summary;
    std::string worker;
    std::string device; // where it was evaluated (Verdict::device)
    double createdAt = 0;
    std::optional<double> finishedAt;
    // The scores of the selection that expanded its parent (search/selection_scores.h); {} for the
    // root and for nodes of sessions older than schema 6.
    nlohmann::json selection = nlohmann::json::object();
    std::string pruned; // why selection passes over its subtree (a dead end); "" when it does not
};

struct DecisionRecord {
    int64_t id = 0;
    int64_t nodeId = 0;
    std::string decision; // "accept" or "reject"
    std::string actor;    // "guard" or "user:<name>"
    std::string reason;
    double createdAt = 0;
};

// An accepted node shown wrong when verified again (search/reverify.h) gets the guard's `reject`
// decision with a reason that starts with this; like a person's decision it overrules earlier ones.
inline constexpr const char *kRevokedPrefix = "revoked on re-verification";
bool isRevocation(const DecisionRecord &d);

struct NodeDetail {
    NodeRecord node;
    Candidate candidate;
    Verdict verdict; // compile log, trials and timing samples as stored
    std::vector<DecisionRecord> decisions;
    nlohmann::json profile; // the latest profiler report, null when never profiled
};

// A finished node's candidate timing, for views that show every node's time without loading each
// node's detail (the tree's hover card, the roofline fraction).
struct NodeTiming {
    int64_t nodeId = 0;
    SampleSummary candidate;
};

struct WorkerEventRecord {
    int slot = 0;
    std::string kind;
    std::string detail;
    double createdAt = 0;
};

class SessionStore {
public:
    enum class Mode { ReadWrite, ReadOnly };
    // Opens (or, in ReadWrite mode, creates) a session file. Throws Error when the file is not a kforge
    // session, is newer than this build, or cannot be read.
    explicit SessionStore(const std::string &path, Mode mode = Mode::ReadWrite);
    ~SessionStore();
    SessionStore(const SessionStore &) = delete;
    SessionStore &operator=(const SessionStore &) = delete;

    const std::string &path() const { return m_path; }
    int schemaVersion() const;
    // The schema version of an existing file (0: empty), read without changing it. Throws Error, as
    // the constructor would, for a file that is not a kforge session or is newer than this build.
    static int fileSchemaVersion(const std::string &path);
    static int currentSchemaVersion();

    // Writes (ReadWrite only).
    int64_t createSession(const SessionInfo &info);
    void setSessionStatus(int64_t sessionId, const std::string &status);
    void setNodeStatus(int64_t nodeId, const std::string &status); // "interrupted", or "running" again
    void setNodePruned(int64_t nodeId, const std::string &reason); // "" lifts it
    // Moves what the write-ahead log holds into the file and empties the log (searches do when they stop).
    void checkpoint();
    int64_t addOperator(int64_t sessionId, const OperatorCard &card);
    int64_t addNode(const NodeRecord &node, const Candidate &candidate);
    void finishNode(int64_t nodeId, const Verdict &verdict, double reward);
    int64_t addDecision(int64_t nodeId, const std::string &decision, const std::string &actor, const std::string &reason);
    void addWorkerEvent(int64_t sessionId, int slot, const std::string &kind, const std::string &detail);
    int64_t addProfile(int64_t nodeId, const nlohmann::json &report);

    // Reads.
    std::vector<SessionInfo> sessions() const;
    std::vector<OperatorRecord> operators(int64_t sessionId) const;
    std::vector<NodeRecord> nodes(int64_t sessionId, int64_t afterId = 0) const;
    std::optional<NodeDetail> nodeDetail(int64_t nodeId) const;
    // The operator card a node was made for; throws Error when the session does not hold its operator.
    OperatorCard cardOf(const NodeRecord &node) const;
    std::vector<WorkerEventRecord> workerEvents(int64_t sessionId) const;
    // Every decision on the session's nodes, oldest first (the guard's and people's).
    std::vector<DecisionRecord> decisions(int64_t sessionId) const;
    // The candidate timing summary of every node of the session that has samples, in id order.
    std::vector<NodeTiming> candidateTimings(int64_t sessionId) const;

private:
    void requireWritable() const;

    std::string m_path;
    Mode m_mode;
    sqlite3 *m_db = nullptr;
};

double nowSeconds();

} // namespace kforge
