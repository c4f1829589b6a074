#pragma once
// An immutable picture of one session as the UI shows it: the session, its operator and its nodes,
// with the best node and the path to it worked out once. Panels get a shared pointer to a const
// snapshot; a change (a loaded file, a node from a live search) makes a new snapshot instead of
// editing one that a panel may be reading.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/session_store.h"

namespace kforge::ui {

class SessionSnapshot {
public:
    SessionSnapshot() = default;
    SessionSnapshot(std::string path, SessionInfo session, std::vector<OperatorRecord> operators,
                    std::vector<NodeRecord> nodes, const std::vector<DecisionRecord> &decisions = {},
                    const std::vector<NodeTiming> &timings = {});

    // Reads the session (the file's first one when sessionId is empty) through a store the caller
    // opened. Throws kforge::Error when the file holds no such session.
    static SessionSnapshot load(const SessionStore &store, std::optional<int64_t> sessionId = {});
    // The one way the window reads a session file: opened read-only, loaded, closed again. Any thread
    // (the open and the live reload run it on a pool thread). Throws kforge::Error with the reason.
    static std::shared_ptr<const SessionSnapshot> read(const std::string &path, std::optional<int64_t> sessionId = {});

    // A copy with one node added, or replaced when its id is already present (a live search reports
    // a node when it is proposed and again when its verdict arrives).
    SessionSnapshot withNode(const NodeRecord &node) const;
    // A copy with the candidate timings read from the file (a live search reports nodes without them).
    SessionSnapshot withTimings(const std::vector<NodeTiming> &timings) const;
    // A copy that knows a decision just written (a person's replaces their earlier one on that node).
    SessionSnapshot withDecision(const DecisionRecord &decision) const;

    const std::string &path() const { return m_path; }
    const SessionInfo &session() const { return m_session; }
    const std::vector<OperatorRecord> &operators() const { return m_operators; }
    const std::vector<NodeRecord> &nodes() const { return m_nodes; } // in id order
    const NodeRecord *node(int64_t id) const;

    // The accepted node with the highest speedup; failing that the fastest correct one; failing that
    // the root. 0 when there are no nodes.
    int64_t bestNodeId() const { return m_best; }
    // Root first, best node last; empty when there are no nodes.
    const std::vector<int64_t> &bestPath() const { return m_bestPath; }
    bool onBestPath(int64_t id) const;

    int countWithStatus(const std::string &status) const;

    // How many finished evaluations the node's subtree holds, itself included: the search tree's
    // visit count, since each result is backed up through every ancestor.
    int visits(int64_t id) const;
    // The candidate's median time and spread; nullptr when the node has no timing samples.
    const SampleSummary *timing(int64_t id) const;
    // The roofline floor over the candidate's median time (1: at the floor); 0 when either is unknown.
    double rooflineFraction(int64_t id) const;
    // The distinct template ids, sorted (for the filter bar).
    std::vector<std::string> templateIds() const;

    // A person's latest accept or reject of the node (the guard's own decisions are not counted);
    // nullptr when nobody has overruled or confirmed the guard. A node a person rejected is never
    // the best node.
    const DecisionRecord *userDecision(int64_t id) const;
    static bool isUserActor(const std::string &actor) { return actor != "guard"; }

private:
    void index();

    std::string m_path;
    SessionInfo m_session;
    std::vector<OperatorRecord> m_operators;
    std::vector<NodeRecord> m_nodes;
    std::unordered_map<int64_t, size_t> m_byId;
    std::unordered_map<int64_t, DecisionRecord> m_userDecisions;
    std::unordered_map<int64_t, SampleSummary> m_timings;
    std::unordered_map<int64_t, int> m_visits;
    int64_t m_best = 0;
    std::vector<int64_t> m_bestPath;
};

using SnapshotPtr = std::shared_ptr<const SessionSnapshot>;

} // namespace kforge::ui
