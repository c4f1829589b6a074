#include "search/campaign.h"

#include <algorithm>
#include <cmath>

namespace kforge {

namespace {
constexpr double kAtRoofline = 0.01; // savable under this fraction of its own time: nothing to win
}

CampaignPlan planCampaign(const std::vector<CampaignInput> &inputs, int totalNodes, double totalWorkloadMs, int minNodes)
{
    CampaignPlan plan;
    plan.totalMs = totalWorkloadMs;
    for (const auto &in : inputs) {
        CampaignItem it;
        it.key = in.key;
        it.workloadMs = std::max(0.0, in.workloadMs);
        it.floorMs = in.floorMs;
        if (in.floorMs >= 0)
            it.savableMs = std::max(0.0, it.workloadMs - in.floorMs);
        else {
            it.savableMs = it.workloadMs;
            it.note = "no roofline for this operator: all its time counted as savable";
        }
        if (!in.searchable) {
            it.savableMs = 0;
            it.note = in.whyNot.empty() ? "no proposer can make candidates for it" : in.whyNot;
        } else if (it.workloadMs > 0 && it.savableMs < kAtRoofline * it.workloadMs) {
            it.savableMs = 0;
            it.note = "already within 1% of its roofline";
        }
        plan.items.push_back(std::move(it));
    }
    std::stable_sort(plan.items.begin(), plan.items.end(), [](const CampaignItem &a, const CampaignItem &b) { return a.savableMs > b.savableMs; });
    std::vector<CampaignItem *> worth;
    double savable = 0;
    for (auto &it : plan.items)
        if (it.savableMs > 0) {
            worth.push_back(&it);
            savable += it.savableMs;
        }
    int left = std::max(0, totalNodes);
    // The floor first, largest savable time first, while the budget lasts.
    for (auto *it : worth) {
        const int give = std::min(left, std::max(0, minNodes));
        it->nodes += give;
        left -= give;
    }
    if (left > 0 && savable > 0) {
        std::vector<std::pair<double, CampaignItem *>> remainders;
        int given = 0;
        for (auto *it : worth) {
            const double exact = left * it->savableMs / savable;
            const int whole = int(std::floor(exact));
            it->nodes += whole;
            given += whole;
            remainders.push_back({exact - whole, it});
        }
        std::stable_sort(remainders.begin(), remainders.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
        for (size_t i = 0; given < left && i < remainders.size(); ++i, ++given)
            remainders[i].second->nodes += 1;
    }
    for (auto &it : plan.items) {
        if (it.savableMs > 0 && it.nodes == 0)
            it.note = "the node budget ran out before it";
        plan.nodes += it.nodes;
    }
    return plan;
}

double amdahlBound(const CampaignPlan &plan)
{
    double saved = 0;
    for (const auto &it : plan.items)
        if (it.nodes > 0)
            saved += it.savableMs;
    const double after = plan.totalMs - saved;
    return after > 0 ? plan.totalMs / after : 0.0;
}

double amdahlSpeedup(const CampaignPlan &plan, const std::vector<std::pair<std::string, double>> &speedups)
{
    double saved = 0;
    for (const auto &it : plan.items)
        for (const auto &[key, s] : speedups)
            if (key == it.key && s > 1.0)
                saved += it.workloadMs * (1.0 - 1.0 / s);
    const double after = plan.totalMs - saved;
    return after > 0 ? plan.totalMs / after : 0.0;
}

} // namespace kforge
