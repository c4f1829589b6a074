#include "search/selection_scores.h"

#include <cstdio>

namespace kforge {

namespace {

std::string num(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

std::string visits(int n)
{
    return std::to_string(n) + (n == 1 ? " visit" : " visits");
}

std::string nodeName(int64_t id, bool root)
{
    return root ? std::string("the baseline") : "#" + std::to_string(id);
}

} // namespace

nlohmann::json selectionJson(const Selection &s, const MctsParams &p, int64_t expanded, int64_t expandedParent)
{
    nlohmann::json j = {{"rule", s.viaUct ? "uct" : "widening"}, {"node", expanded}, {"depth", s.depth}, {"visits", s.visits},
                        {"children", s.children}, {"allowed", s.allowed}, {"widen_k", p.widenK}, {"widen_alpha", p.widenAlpha}};
    if (s.viaUct) {
        j["parent"] = expandedParent;
        j["parent_visits"] = s.parentVisits;
        j["mean"] = s.mean;
        j["exploration"] = s.explorationTerm;
        j["uct"] = s.uct;
        j["c"] = p.exploration;
        if (p.bestBackup)
            j["backup"] = "best";
        j["runner_up_uct"] = s.runnerUpUct ? nlohmann::json(*s.runnerUpUct) : nlohmann::json();
    }
    return j;
}

nlohmann::json ruleJson(const std::string &rule, const std::string &detail)
{
    return {{"rule", rule}, {"detail", detail}};
}

std::string pruneReason(const Prune &p, int64_t siblingId, const MctsParams &params)
{
    return "dead end: every leaf of its subtree (" + visits(p.visits) + ") failed or had nothing more to offer, and its best reward "
         + num(p.best) + " is " + num(p.siblingBest - p.best) + " below sibling #" + std::to_string(siblingId) + "'s " + num(p.siblingBest)
         + " (margin " + num(params.pruneMargin) + ")";
}

namespace {
std::string explainRule(const nlohmann::json &j);
}

std::string explainSelection(const nlohmann::json &j)
{
    if (!j.is_object())
        return {};
    std::string out = explainRule(j);
    if (const auto made = j.find("made"); made != j.end() && made->is_string() && !made->get<std::string>().empty())
        out += (out.empty() ? "" : " ") + std::string("Made: ") + made->get<std::string>() + ".";
    return out;
}

namespace {

std::string explainRule(const nlohmann::json &j)
{
    if (!j.contains("rule"))
        return {};
    const std::string rule = j.value("rule", "");
    if (rule == "warm_start" || rule == "diverse_root")
        return "Chosen because " + j.value("detail", rule) + ".";
    const bool root = j.value("depth", 0) == 0;
    const std::string who = nodeName(j.value("node", int64_t(0)), root);
    const std::string widening = who + " may grow a new child (" + std::to_string(j.value("children", 0)) + " of the "
                               + std::to_string(j.value("allowed", 0)) + " progressive widening allows at "
                               + visits(j.value("visits", 0)) + ")";
    if (rule != "uct")
        return "Chosen because " + widening + ".";
    const auto runnerUp = j.find("runner_up_uct");
    const std::string beat = runnerUp == j.end() || runnerUp->is_null() ? "with no sibling to beat"
                                                                        : "over the runner-up's " + num(runnerUp->get<double>());
    return "Chosen because " + who + " won UCT " + num(j.value("uct", 0.0)) + " = " + (j.value("backup", "") == "best" ? "best reward " : "mean reward ") + num(j.value("mean", 0.0))
         + " + exploration " + num(j.value("exploration", 0.0)) + " (c " + num(j.value("c", 0.0)) + ", "
         + visits(j.value("parent_visits", 0)) + " of "
         + nodeName(j.value("parent", int64_t(0)), j.value("depth", 0) <= 1) + ") " + beat + ", and " + widening + ".";
}

} // namespace

} // namespace kforge
