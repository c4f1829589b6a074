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
    return r;
}

} // namespace kforge
