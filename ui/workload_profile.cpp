#include "ui/workload_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "util/error.h"

namespace kforge::ui {

WorkloadProfile::WorkloadProfile(std::string path, WorkloadFile file) : m_path(std::move(path)), m_file(std::move(file))
{
    m_groups = groupCalls(m_file.calls);
    m_groupOfCall.assign(m_file.calls.size(), -1);
    for (size_t g = 0; g < m_groups.size(); ++g) {
        m_topLevelUs += m_groups[g].totalUs;
        m_bySignature[m_groups[g].signature] = long(g);
        for (size_t c : m_groups[g].calls)
            m_groupOfCall[c] = long(g);
    }
    double first = 0;
    for (size_t i = 0; i < m_file.calls.size(); ++i)
        first = i == 0 ? m_file.calls[i].startUs : std::min(first, m_file.calls[i].startUs);
    m_timeline.reserve(m_file.calls.size());
    for (const auto &c : m_file.calls)
        m_timeline.push_back({c.startUs - first, c.durUs, c.depth, c.tid});
    m_byDepth = assignLanes(m_timeline, LaneBy::Depth);
    m_byThread = assignLanes(m_timeline, LaneBy::Thread);
    m_cardGroup = matchCardsToGroups(m_file, m_groups);
}

std::shared_ptr<const WorkloadProfile> WorkloadProfile::read(const std::string &path)
{
    auto w = loadWorkloadFile(path);
    if (w.calls.empty())
        throw Error("workload file " + path + " holds no profiled calls yet: run `kforge-cli profile " + path + "` first");
    return std::make_shared<const WorkloadProfile>(path, std::move(w));
}

long WorkloadProfile::cardOfGroup(size_t group) const
{
    auto it = std::find(m_cardGroup.begin(), m_cardGroup.end(), long(group));
    return it == m_cardGroup.end() ? -1 : long(it - m_cardGroup.begin());
}

long WorkloadProfile::groupOfSignature(const std::string &signature) const
{
    auto it = m_bySignature.find(signature);
    return it == m_bySignature.end() ? -1 : it->second;
}

std::vector<long> matchCardsToGroups(const WorkloadFile &w, const std::vector<CallGroup> &groups)
{
    std::vector<long> out(w.cards.size(), -1);
    std::vector<bool> claimed(groups.size(), false);
    auto fits = [&](const OperatorCard &card, size_t g) {
        const auto &call = w.calls.at(groups[g].calls.front());
        return !claimed[g] && call.op == card.atenOp && call.overload == card.atenOverload
               && int64_t(groups[g].calls.size()) == card.calls;
    };
    size_t next = 0; // cards follow the ranking, so the next fitting pattern is almost always it
    for (size_t c = 0; c < w.cards.size(); ++c) {
        long found = -1;
        for (size_t g = next; g < groups.size() && found < 0; ++g)
            if (fits(w.cards[c], g))
                found = long(g);
        for (size_t g = 0; g < next && found < 0; ++g)
            if (fits(w.cards[c], g))
                found = long(g);
        if (found >= 0) {
            claimed[size_t(found)] = true;
            out[c] = found;
            next = size_t(found) + 1;
        }
    }
    return out;
}

std::string callShapes(const CapturedCall &call)
{
    std::string shapes;
    for (const auto &a : call.args)
        for (const auto &t : a.tensors) {
            std::string s;
            for (int64_t d : t.shape)
                s += (s.empty() ? "" : "x") + std::to_string(d);
            shapes += (shapes.empty() ? "" : " ") + (s.empty() ? std::string("scalar") : s) + ":" + t.dtype;
        }
    return shapes;
}

const OperatorChange *ProfileComparison::find(const std::string &signature) const
{
    auto it = m_index.find(signature);
    return it == m_index.end() ? nullptr : &operators[it->second];
}

ProfileComparison compareProfiles(const WorkloadProfile &before, const WorkloadProfile &after, double threshold, double minShare)
{
    ProfileComparison out;
    out.beforeUs = before.topLevelUs();
    out.afterUs = after.topLevelUs();
    auto entry = [&](const CallGroup &g, const WorkloadProfile &p) -> OperatorChange & {
        auto [it, fresh] = out.m_index.emplace(g.signature, out.operators.size());
        if (fresh)
            out.operators.push_back({g.signature, p.file().calls.at(g.calls.front()).qualifiedName()});
        return out.operators[it->second];
    };
    for (const auto &g : before.groups()) {
        auto &o = entry(g, before);
        o.beforeUs = g.totalUs;
        o.beforeCalls = g.calls.size();
    }
    for (const auto &g : after.groups()) {
        auto &o = entry(g, after);
        o.afterUs = g.totalUs;
        o.afterCalls = g.calls.size();
    }
    const double floorUs = minShare * std::max(out.beforeUs, out.afterUs);
    for (auto &o : out.operators) {
        const double moved = std::fabs(o.afterUs - o.beforeUs);
        o.changed = o.beforeCalls == 0 || o.afterCalls == 0 || (moved > threshold * o.beforeUs && moved > floorUs);
    }
    std::stable_sort(out.operators.begin(), out.operators.end(), [](const OperatorChange &a, const OperatorChange &b) {
        return a.beforeUs - a.afterUs > b.beforeUs - b.afterUs;
    });
    out.m_index.clear();
    for (size_t i = 0; i < out.operators.size(); ++i)
        out.m_index[out.operators[i].signature] = i;
    return out;
}

const OperatorRecord *sessionOperatorFor(const OperatorCard &card, const SessionSnapshot *session)
{
    if (!session)
        return nullptr;
    for (const auto &op : session->operators())
        if (op.card.key == card.key)
            return &op;
    for (const auto &op : session->operators())
        if (op.card.atenOp == card.atenOp && op.card.atenOverload == card.atenOverload && op.card.shape == card.shape)
            return &op;
    // A family card stands for what its family computes at its shape: a search of that family at that
    // shape and dtype (kforge-cli search --family F --shape S) searched this card too.
    auto dtypes = [](const OperatorCard &c) {
        std::vector<DType> d;
        for (const auto &t : c.inputs)
            d.push_back(t.dtype);
        return d;
    };
    if (!card.family.empty())
        for (const auto &op : session->operators())
            if (op.card.family == card.family && op.card.shape == card.shape && dtypes(op.card) == dtypes(card))
                return &op;
    return nullptr;
}

double sessionBandwidth(const SessionSnapshot &session, const OperatorRecord *preferred)
{
    double rate = 0;
    for (const auto &n : session.nodes()) {
        if (n.rooflineUs <= 0)
            continue;
        const OperatorRecord *op = nullptr;
        for (const auto &o : session.operators())
            if (o.id == n.operatorId)
                op = &o;
        const double bytes = op ? op->card.minBytes(op->card.shape) : 0;
        if (bytes <= 0)
            continue;
        const double r = bytes / (n.rooflineUs * 1e-6);
        if (preferred && op == preferred)
            return r;
        if (rate == 0)
            rate = r;
    }
    return rate;
}

namespace {

std::string searchStatus(const OperatorRecord &op, const SessionSnapshot &s, int64_t &best)
{
    const NodeRecord *top = nullptr;
    int nodes = 0, running = 0;
    for (const auto &n : s.nodes()) {
        if (n.operatorId != op.id || !n.parentId)
            continue;
        ++nodes;
        running += n.status == "running";
        const auto *d = s.userDecision(n.id);
        if (n.status == "accepted" && !(d && d->decision == "reject") && (!top || n.speedup > top->speedup))
            top = &n;
    }
    char buf[128];
    if (top) {
        best = top->id;
        std::snprintf(buf, sizeof buf, "accepted %.2fx (#%lld)%s", top->speedup, (long long)top->id, running ? ", searching" : "");
    } else if (nodes == 0) {
        std::snprintf(buf, sizeof buf, "in the session, no candidates yet");
    } else {
        std::snprintf(buf, sizeof buf, "%s: %d node%s, none faster", running ? "searching" : "searched", nodes, nodes == 1 ? "" : "s");
    }
    return buf;
}

} // namespace

std::vector<OperatorRow> operatorRows(const WorkloadProfile &profile, const SessionSnapshot *session, const ProfileComparison *withPack)
{
    std::vector<OperatorRow> rows;
    const auto &w = profile.file();
    const double total = profile.topLevelUs();
    const double anyRate = session ? sessionBandwidth(*session) : 0;
    for (size_t c = 0; c < w.cards.size(); ++c) {
        const auto &card = w.cards[c];
        OperatorRow r;
        r.key = card.key;
        r.op = card.atenOverload.empty() ? card.atenOp : card.atenOp + "." + card.atenOverload;
        r.group = profile.groupOfCard(c);
        if (r.group >= 0) {
            const auto &g = profile.groups()[size_t(r.group)];
            r.calls = int64_t(g.calls.size());
            r.totalUs = g.totalUs;
            r.shapes = callShapes(w.calls.at(g.calls.front()));
            if (const OperatorChange *o = withPack ? withPack->find(g.signature) : nullptr; o && o->afterCalls > 0) {
                r.afterUs = o->afterUs;
                r.changed = o->changed;
            }
        } else {
            r.calls = card.calls;
            r.totalUs = card.workloadMs * 1000.0;
        }
        r.share = total > 0 ? r.totalUs / total : 0;
        const OperatorRecord *op = sessionOperatorFor(card, session);
        const double rate = op ? sessionBandwidth(*session, op) : anyRate;
        const double floorUs = rate > 0 ? card.minBytes(card.shape) / rate * 1e6 : 0;
        if (floorUs > 0 && r.calls > 0 && r.totalUs > 0)
            r.headroom = r.totalUs / double(r.calls) / floorUs;
        r.search = op ? searchStatus(*op, *session, r.bestNode) : "not searched";
        rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const OperatorRow &a, const OperatorRow &b) { return a.totalUs > b.totalUs; });
    return rows;
}

} // namespace kforge::ui
