#include "proposers/template_proposer.h"

#include <algorithm>
#include <cstdio>

#include "search/search_engine.h"

namespace kforge {

namespace {

std::string speedupText(double s)
{
    if (s < 0)
        return "failed";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2fx", s);
    return buf;
}

std::string describe(const moves::Origin &o)
{
    return (o.node ? "node " + std::to_string(o.node) : std::string("the parent")) + " (" + speedupText(o.score) + ")";
}

} // namespace

TemplateProposer::TemplateProposer(std::string backend, const TemplateLibrary &lib)
    : m_backend(std::move(backend)), m_lib(lib)
{
}

void TemplateProposer::known(const NodeRecord &node)
{
    if (!node.parentId) // the baseline
        return;
    if (!m_evidence.isSeen(node.templateId, node.params))
        ++m_seenByTemplate[node.templateId];
    m_evidence.propose(node.templateId, node.params);
    if (!isUnfinished(node.status))
        finished(node);
}

void TemplateProposer::finished(const NodeRecord &node)
{
    if (!node.parentId)
        return;
    if (!m_evidence.isSeen(node.templateId, node.params)) // a node it did not propose (a lesson's warm start)
        ++m_seenByTemplate[node.templateId];
    const double score = isCorrectStatus(node.status) && node.speedup > 0 ? node.speedup : -1.0;
    m_evidence.measure(node.templateId, node.params, score);
    m_results[node.id] = Result{node.templateId, node.params, score};
}

Proposal TemplateProposer::render(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card) const
{
    Proposal prop;
    prop.templateId = t.id;
    prop.params = params;
    prop.candidate.backend = t.backend;
    prop.candidate.source = t.render(params, card);
    if (t.launch)
        prop.candidate.launch = t.launch(params, card);
    return prop;
}

double TemplateProposer::templateBest(const std::string &templateId) const
{
    double best = -1;
    for (const auto &[id, r] : m_results)
        if (r.templateId == templateId)
            best = std::max(best, r.score);
    return best;
}

int TemplateProposer::templateResults(const std::string &templateId) const
{
    int n = 0;
    for (const auto &[id, r] : m_results)
        n += r.templateId == templateId;
    return n;
}

std::vector<moves::Origin> TemplateProposer::origins(const KernelTemplate &t) const
{
    std::vector<moves::Origin> out;
    for (const auto &[id, r] : m_results)
        if (r.templateId == t.id && r.score > 0)
            out.push_back({&t, r.params, r.score, id});
    std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.score > b.score; });
    return out;
}

std::optional<Proposal> TemplateProposer::take(const KernelTemplate &t, const nlohmann::json &params, const OperatorCard &card, std::string why,
                                               bool start)
{
    if (m_evidence.isSeen(t.id, params))
        return std::nullopt;
    m_evidence.propose(t.id, params);
    if (start)
        ++m_seenByTemplate[t.id];
    Proposal p = render(t, params, card);
    p.rationale = std::move(why);
    return p;
}

std::optional<Proposal> TemplateProposer::takeMove(const moves::Move &m, const std::vector<moves::Origin> &from, const OperatorCard &card,
                                                   const std::string &prefix)
{
    return take(*m.tmpl, m.params, card,
                prefix + "move " + m.parameter + " from " + m.from.dump() + " to " + m.to.dump() + " (" + moves::rankName(m.rank) + ") from "
                    + describe(from[m.origin]));
}

std::optional<Proposal> TemplateProposer::anotherStart(const KernelTemplate &t, const OperatorCard &card)
{
    if (!t.moreStarts || m_seenByTemplate[t.id] == 0)
        return std::nullopt;
    for (const auto &s : t.moreStarts(card))
        if ((!t.valid || t.valid(s.point, card)) && !m_evidence.isSeen(t.id, s.point))
            return take(t, s.point, card, "another expert start for " + t.id + ": " + s.why);
    return std::nullopt;
}

std::optional<Proposal> TemplateProposer::fromRoot(const std::vector<const KernelTemplate *> &templates, const OperatorCard &card,
                                                   std::mt19937_64 &rng)
{
    // Every template's start: the seeded ones first, those whose seeds read the input fewest times
    // first among them, each group in the library's order.
    struct Start {
        int reads; // unseeded templates rank after every seeded one
        const KernelTemplate *t;
        nlohmann::json seed;
    };
    std::vector<Start> ranked;
    for (const auto *t : templates) {
        nlohmann::json seed = t->seed ? t->seed(card) : nlohmann::json();
        const int reads = !t->seed ? 3 : t->reads ? t->reads(seed, card) : 1;
        ranked.push_back({reads, t, std::move(seed)});
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](const Start &a, const Start &b) { return a.reads < b.reads; });
    for (const auto &[reads, t, seed] : ranked) {
        if (m_seenByTemplate[t->id] > 0)
            continue;
        if (t->seed) {
            if ((!t->valid || t->valid(seed, card)) && !m_evidence.isSeen(t->id, seed))
                return take(*t, seed, card, "expert starting point for " + t->id);
        }
        if (const auto c = moves::nearestUnseen(*t, moves::centre(*t), card, m_evidence, rng))
            return take(*t, *c, card, "first attempt with " + t->id + " at the middle of each parameter's values");
    }
    // Then the started templates' further expert starts, unless another template is clearly ahead.
    double lead = -1;
    for (const auto *t : templates)
        lead = std::max(lead, templateBest(t->id));
    for (const auto &[reads, t, seed] : ranked)
        if (templateBest(t->id) >= kClearlyBehind * lead)
            if (auto p = anotherStart(*t, card))
                return p;
    // Then from the best points so far, whichever template they are of.
    std::vector<moves::Origin> all;
    for (const auto *t : templates) {
        const auto o = origins(*t);
        all.insert(all.end(), o.begin(), o.end());
    }
    std::stable_sort(all.begin(), all.end(), [](const auto &a, const auto &b) { return a.score > b.score; });
    if (const auto m = moves::bestMove(all, card, m_evidence, rng))
        return takeMove(*m, all, card, "from the best so far: ");
    // No coordinate move is left from any correct point: the unseen point nearest each template's best.
    std::vector<const KernelTemplate *> byBest = templates;
    std::stable_sort(byBest.begin(), byBest.end(), [&](auto *a, auto *b) { return templateBest(a->id) > templateBest(b->id); });
    for (const auto *t : byBest) {
        const auto o = origins(*t);
        const auto target = o.empty() ? moves::centre(*t) : o.front().params;
        if (const auto p = moves::nearestUnseen(*t, target, card, m_evidence, rng))
            return take(*t, *p, card, "the unseen point of " + t->id + " nearest " + (o.empty() ? "the middle of its values" : describe(o.front())));
    }
    return std::nullopt;
}

std::optional<Proposal> TemplateProposer::fromNode(const std::vector<const KernelTemplate *> &templates, const KernelTemplate &t,
                                                   const NodeRecord &parent, const OperatorCard &card, std::mt19937_64 &rng)
{
    // A template clearly behind another's best gives its budget to that one.
    const double own = templateBest(t.id);
    const KernelTemplate *leader = nullptr;
    for (const auto *u : templates)
        if (u != &t && templateBest(u->id) > 0 && (!leader || templateBest(u->id) > templateBest(leader->id)))
            leader = u;
    if (leader && templateResults(t.id) >= 2 && own < kClearlyBehind * templateBest(leader->id)) {
        const auto from = origins(*leader);
        if (const auto m = moves::bestMove(from, card, m_evidence, rng))
            return takeMove(*m, from, card,
                            "switch template to " + leader->id + " (" + t.id + "'s best " + speedupText(own) + " is under half of its "
                                + speedupText(templateBest(leader->id)) + "): ");
    }
    if (auto p = anotherStart(t, card))
        return p;
    auto from = origins(t);
    if (from.empty() || !m_results.count(parent.id)) { // nothing correct yet (a repair), or a parent never reported
        const double score = isCorrectStatus(parent.status) && parent.speedup > 0 ? parent.speedup : -1.0;
        if (from.empty() || score > from.front().score)
            from.insert(from.begin(), moves::Origin{&t, parent.params, score, parent.id});
    }
    if (const auto m = moves::bestMove(from, card, m_evidence, rng))
        return takeMove(*m, from, card, "");
    if (const auto p = moves::nearestUnseen(t, from.front().params, card, m_evidence, rng))
        return take(t, *p, card, "no move along one parameter is left: the unseen point of " + t.id + " nearest " + describe(from.front()));
    return fromRoot(templates, card, rng); // this template is spent: the others
}

std::optional<Proposal> TemplateProposer::adapt(const OperatorCard &card, const std::string &templateId, const nlohmann::json &point,
                                                std::mt19937_64 &rng)
{
    const KernelTemplate *t = m_lib.find(templateId);
    if (!t || t->family != card.family || t->backend != m_backend || !point.is_object())
        return std::nullopt;
    // The point as this template's space has it now: a parameter it no longer has is dropped, and one
    // the lesson does not give (or gives a value the list no longer holds) takes the template's own
    // start value (its seed's, else the middle of its values). When that point is not valid at this
    // shape, the valid one nearest it.
    const nlohmann::json seed = t->seed ? t->seed(card) : nlohmann::json::object();
    const nlohmann::json middle = moves::centre(*t);
    nlohmann::json p = nlohmann::json::object();
    bool whole = true;
    for (const auto &[name, values] : t->space) {
        const auto it = point.find(name);
        if (it != point.end() && std::find(values.begin(), values.end(), *it) != values.end()) {
            p[name] = *it;
            continue;
        }
        whole = false;
        const auto s = seed.find(name);
        p[name] = s != seed.end() && std::find(values.begin(), values.end(), *s) != values.end() ? *s : middle.value(name, nlohmann::json());
    }
    const std::string from = whole ? "the lesson's point" : "the lesson's point " + point.dump() + " in this template's space now, " + p.dump();
    if ((!t->valid || t->valid(p, card)) && !m_evidence.isSeen(t->id, p))
        return take(*t, p, card, from + ", made at another shape of this operator", false);
    if (const auto q = moves::nearestUnseen(*t, p, card, m_evidence, rng)) // not valid here, or already made
        return take(*t, *q, card, "the unseen valid point nearest " + from + ", made at another shape of this operator", false);
    return std::nullopt;
}

std::optional<Proposal> TemplateProposer::propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng)
{
    const auto templates = m_lib.forFamily(card.family, m_backend);
    if (templates.empty())
        return std::nullopt;
    const KernelTemplate *t = parent ? m_lib.find(parent->templateId) : nullptr;
    if (!t || t->family != card.family || t->backend != m_backend) // the root, or a node of no template of ours (a lesson's)
        return fromRoot(templates, card, rng);
    return fromNode(templates, *t, *parent, card, rng);
}

} // namespace kforge
