#include "search/resume.h"

#include <algorithm>

#include "util/error.h"

namespace kforge {

nlohmann::json resumeOptions(const SearchOptions &options, int workers, const std::string &proposerSpec, const std::string &baseUrl,
                             double budgetUsd)
{
    nlohmann::json j = {{"nodes", options.maxNodes}, {"workers", workers}, {"seed", options.seed}, {"proposer_spec", proposerSpec},
                        {"samples", options.eval.benchSamples}, {"deadline_ms", options.eval.deadlineMs}, {"roots", options.roots},
                        {"mcts", {{"exploration", options.mcts.exploration}, {"widen_k", options.mcts.widenK},
                                  {"widen_alpha", options.mcts.widenAlpha}, {"max_repairs", options.mcts.maxRepairs},
                                  {"prune_margin", options.mcts.pruneMargin}, {"prune_min_visits", options.mcts.pruneMinVisits},
                                  {"best_backup", options.mcts.bestBackup}}}};
    if (!baseUrl.empty())
        j["base_url"] = baseUrl;
    if (budgetUsd > 0)
        j["budget_usd"] = budgetUsd;
    return j;
}

void setCampaignPlan(nlohmann::json &options, const std::vector<std::pair<std::string, int>> &steps)
{
    options["campaign"] = true;
    auto &plan = options["campaign_plan"] = nlohmann::json::array();
    for (const auto &[key, nodes] : steps)
        plan.push_back({{"key", key}, {"nodes", nodes}});
}

namespace {

// A campaign's steps from its stored plan, matched to the session's operators by key; each step counts
// the candidates it has.
std::vector<ResumeStep> planSteps(const SessionStore &store, const SessionInfo &session, const std::vector<OperatorRecord> &ops,
                                  const nlohmann::json &plan)
{
    std::vector<ResumeStep> steps;
    for (const auto &step : plan) {
        if (!step.is_object() || !step.contains("key") || !step["key"].is_string() || !step.value("nodes", nlohmann::json()).is_number_integer())
            throw Error("the campaign plan in '" + store.path() + "' is not a list of operators and nodes: " + step.dump());
        const auto key = step["key"].get<std::string>();
        const auto op = std::find_if(ops.begin(), ops.end(), [&](const OperatorRecord &o) { return o.card.key == key; });
        if (op == ops.end())
            throw Error("the campaign in '" + store.path() + "' plans operator '" + key + "', which the session does not hold");
        steps.push_back({*op, std::max(0, step["nodes"].get<int>())});
    }
    for (const auto &n : store.nodes(session.id))
        for (auto &s : steps)
            if (n.operatorId == s.op.id && n.parentId) {
                ++s.made;
                s.unfinished += isUnfinished(n.status);
            }
    return steps;
}

} // namespace

ResumableSearch lastSearch(const SessionStore &store)
{
    const auto sessions = store.sessions();
    if (sessions.empty())
        throw Error("'" + store.path() + "' holds no search to resume");
    ResumableSearch r;
    r.session = sessions.back();
    const auto ops = store.operators(r.session.id);
    if (ops.empty())
        throw Error("the last search in '" + store.path() + "' has no operator to resume");
    r.op = ops.front();
    const nlohmann::json was = r.session.options.is_object() ? r.session.options : nlohmann::json::object();
    r.options.maxNodes = was.value("nodes", 24);
    r.options.seed = was.value("seed", r.options.seed);
    r.options.eval.benchSamples = was.value("samples", r.options.eval.benchSamples);
    r.options.eval.deadlineMs = was.value("deadline_ms", r.options.eval.deadlineMs);
    r.options.roots = was.value("roots", 0);
    if (const auto m = was.find("mcts"); m != was.end() && m->is_object()) { // absent before the constants were options
        auto &p = r.options.mcts;
        p.exploration = m->value("exploration", p.exploration);
        p.widenK = m->value("widen_k", p.widenK);
        p.widenAlpha = m->value("widen_alpha", p.widenAlpha);
        p.maxRepairs = m->value("max_repairs", p.maxRepairs);
        p.pruneMargin = m->value("prune_margin", p.pruneMargin);
        p.pruneMinVisits = m->value("prune_min_visits", p.pruneMinVisits);
        p.bestBackup = m->value("best_backup", p.bestBackup);
    }
    r.workers = std::max(1, was.value("workers", 1));
    r.proposerSpec = was.value("proposer_spec", r.session.proposer == "templates" ? std::string("templates") : std::string());
    if (r.proposerSpec.empty())
        throw Error("the search in '" + store.path() + "' used proposer '" + r.session.proposer
                    + "', which this session file does not say how to rebuild");
    r.baseUrl = was.value("base_url", std::string());
    r.budgetUsd = was.value("budget_usd", 0.0);
    r.campaign = was.value("campaign", false);
    if (const auto plan = was.find("campaign_plan"); plan != was.end()) {
        if (!plan->is_array())
            throw Error("the campaign plan in '" + store.path() + "' is not a list of operators and nodes");
        r.steps = planSteps(store, r.session, ops, *plan);
        r.campaign = true;
    } else if (r.campaign) {
        throw Error("the campaign in '" + store.path() + "' was written without its plan, so what is left of it is not known: "
                    "start it again (kforge-cli campaign)");
    } else {
        r.steps = planSteps(store, r.session, ops, nlohmann::json::array({{{"key", r.op.card.key}, {"nodes", r.options.maxNodes}}}));
    }
    if (r.steps.empty())
        throw Error("the campaign in '" + store.path() + "' plans no operator");
    r.op = r.steps.front().op;
    return r;
}

} // namespace kforge
