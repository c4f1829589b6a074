#include "ui/session_snapshot.h"

#include <algorithm>
#include <unordered_set>

#include "util/error.h"

namespace kforge::ui {

SessionSnapshot::SessionSnapshot(std::string path, SessionInfo session, std::vector<OperatorRecord> operators,
                                 std::vector<NodeRecord> nodes, const std::vector<DecisionRecord> &decisions,
                                 const std::vector<NodeTiming> &timings)
    : m_path(std::move(path)), m_session(std::move(session)), m_operators(std::move(operators)), m_nodes(std::move(nodes))
{
    for (const auto &t : timings)
        m_timings[t.nodeId] = t.candidate;
    for (const auto &d : decisions) // oldest first, so the latest one stays
        if (isUserActor(d.actor))
            m_userDecisions[d.nodeId] = d;
    std::stable_sort(m_nodes.begin(), m_nodes.end(), [](const NodeRecord &a, const NodeRecord &b) { return a.id < b.id; });
    index();
}

SessionSnapshot SessionSnapshot::load(const SessionStore &store, std::optional<int64_t> sessionId)
{
    const auto sessions = store.sessions();
    if (sessions.empty())
        throw Error("'" + store.path() + "' is a kforge session file but holds no session yet");
    const SessionInfo *info = &sessions.front();
    if (sessionId) {
        auto it = std::find_if(sessions.begin(), sessions.end(), [&](const SessionInfo &s) { return s.id == *sessionId; });
        if (it == sessions.end())
            throw Error("'" + store.path() + "' has no session " + std::to_string(*sessionId));
        info = &*it;
    }
    return SessionSnapshot(store.path(), *info, store.operators(info->id), store.nodes(info->id), store.decisions(info->id),
                           store.candidateTimings(info->id));
}

std::shared_ptr<const SessionSnapshot> SessionSnapshot::read(const std::string &path, std::optional<int64_t> sessionId)
{
    SessionStore store(path, SessionStore::Mode::ReadOnly);
    return std::make_shared<const SessionSnapshot>(load(store, sessionId));
}

SessionSnapshot SessionSnapshot::withNode(const NodeRecord &node) const
{
    SessionSnapshot copy = *this;
    auto it = copy.m_byId.find(node.id);
    if (it != copy.m_byId.end()) {
        copy.m_nodes[it->second] = node;
    } else {
        auto pos = std::lower_bound(copy.m_nodes.begin(), copy.m_nodes.end(), node.id,
                                    [](const NodeRecord &n, int64_t id) { return n.id < id; });
        copy.m_nodes.insert(pos, node);
    }
    copy.index();
    return copy;
}

SessionSnapshot SessionSnapshot::withTimings(const std::vector<NodeTiming> &timings) const
{
    SessionSnapshot copy = *this;
    for (const auto &t : timings)
        copy.m_timings[t.nodeId] = t.candidate;
    return copy;
}

int SessionSnapshot::visits(int64_t id) const
{
    auto it = m_visits.find(id);
    return it == m_visits.end() ? 0 : it->second;
}

const SampleSummary *SessionSnapshot::timing(int64_t id) const
{
    auto it = m_timings.find(id);
    return it == m_timings.end() ? nullptr : &it->second;
}

double SessionSnapshot::rooflineFraction(int64_t id) const
{
    const NodeRecord *n = node(id);
    const SampleSummary *t = timing(id);
    return n && t && n->rooflineUs > 0 && t->median > 0 ? n->rooflineUs / t->median : 0.0;
}

std::vector<std::string> SessionSnapshot::templateIds() const
{
    std::vector<std::string> ids;
    for (const auto &n : m_nodes)
        if (!n.templateId.empty())
            ids.push_back(n.templateId);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

SessionSnapshot SessionSnapshot::withDecision(const DecisionRecord &decision) const
{
    SessionSnapshot copy = *this;
    if (isUserActor(decision.actor)) {
        copy.m_userDecisions[decision.nodeId] = decision;
        copy.index();
    }
    return copy;
}

const DecisionRecord *SessionSnapshot::userDecision(int64_t id) const
{
    auto it = m_userDecisions.find(id);
    return it == m_userDecisions.end() ? nullptr : &it->second;
}

const NodeRecord *SessionSnapshot::node(int64_t id) const
{
    auto it = m_byId.find(id);
    return it == m_byId.end() ? nullptr : &m_nodes[it->second];
}

bool SessionSnapshot::onBestPath(int64_t id) const
{
    return std::find(m_bestPath.begin(), m_bestPath.end(), id) != m_bestPath.end();
}

int SessionSnapshot::countWithStatus(const std::string &status) const
{
    return int(std::count_if(m_nodes.begin(), m_nodes.end(), [&](const NodeRecord &n) { return n.status == status; }));
}

void SessionSnapshot::index()
{
    m_byId.clear();
    for (size_t i = 0; i < m_nodes.size(); ++i)
        m_byId[m_nodes[i].id] = i;

    // Visits: children have larger ids than their parents, so one pass from the newest node adds each
    // subtree into its parent after the subtree is complete.
    m_visits.clear();
    for (auto it = m_nodes.rbegin(); it != m_nodes.rend(); ++it) {
        int &v = m_visits[it->id];
        v += it->status != "running" && it->parentId ? 1 : 0;
        if (it->parentId && *it->parentId < it->id && m_byId.count(*it->parentId))
            m_visits[*it->parentId] += v;
    }

    // Accepted beats merely correct; within a class the higher speedup wins, the older node on ties.
    auto rank = [this](const NodeRecord &n) {
        if (const auto *d = userDecision(n.id); d && d->decision == "reject")
            return 0;
        if (n.status == "accepted")
            return 2;
        if (n.status == "not_faster")
            return 1;
        return 0;
    };
    const NodeRecord *best = nullptr;
    for (const auto &n : m_nodes) {
        if (rank(n) == 0)
            continue;
        if (!best || rank(n) > rank(*best) || (rank(n) == rank(*best) && n.speedup > best->speedup))
            best = &n;
    }
    if (!best) {
        auto root = std::find_if(m_nodes.begin(), m_nodes.end(), [](const NodeRecord &n) { return !n.parentId; });
        best = root != m_nodes.end() ? &*root : nullptr;
    }
    m_best = best ? best->id : 0;

    m_bestPath.clear();
    std::unordered_set<int64_t> visited; // a damaged file must not loop forever
    for (const NodeRecord *n = best; n && visited.insert(n->id).second; n = n->parentId ? node(*n->parentId) : nullptr)
        m_bestPath.push_back(n->id);
    std::reverse(m_bestPath.begin(), m_bestPath.end());
}

} // namespace kforge::ui
