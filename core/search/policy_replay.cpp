#include "search/policy_replay.h"

#include <random>

#include "util/error.h"

namespace kforge {

std::vector<ReplayStep> replaySearch(Proposer &proposer, const OperatorCard &card, const MctsParams &params, uint64_t seed, int budget,
                                     const Measure &measure, const std::function<bool(const ReplayStep &)> &enough,
                                     const std::optional<ReplayLesson> &lesson)
{
    std::mt19937_64 rng(seed);
    MctsTree tree;
    std::vector<NodeRecord> records(1); // by tree index; the root is the baseline
    records[0].id = 0;
    records[0].status = "baseline";
    std::vector<ReplayStep> steps;
    bool lessonLeft = lesson.has_value();
    while (int(steps.size()) < budget) {
        std::optional<Proposal> warmStart; // the lesson after the first proposal, as SearchEngine makes one of another shape
        if (lessonLeft && !steps.empty()) {
            lessonLeft = false;
            warmStart = proposer.adapt(card, lesson->templateId, lesson->point, rng);
        }
        const bool warm = warmStart.has_value();
        const auto sel = warm ? std::optional<int>(0) : tree.select(params);
        if (!sel)
            break;
        const NodeRecord *parent = *sel == 0 ? nullptr : &records[size_t(*sel)];
        auto proposal = warm ? std::move(warmStart) : proposer.propose(card, parent, rng);
        if (!proposal) {
            tree.markExhausted(*sel);
            continue;
        }
        const auto speedup = measure(proposal->templateId, proposal->params);
        if (!speedup)
            throw Error("the proposer left the measured space: " + proposal->templateId + proposal->params.dump());
        const int t = tree.addChild(*sel);
        const bool correct = *speedup > 0;
        NodeRecord rec;
        rec.id = t;
        rec.parentId = *sel;
        rec.templateId = proposal->templateId;
        rec.params = proposal->params;
        rec.speedup = *speedup;
        rec.status = correct ? "accepted" : "incorrect";
        rec.reward = rewardFor(correct, *speedup);
        rec.summary = proposal->rationale;
        records.push_back(rec);
        tree.complete(t, rec.reward, !correct);
        proposer.finished(rec);
        tree.prune(params);
        steps.push_back({rec.templateId, rec.params, *speedup, t, *sel, proposal->rationale});
        if (enough && enough(steps.back()))
            break;
    }
    return steps;
}

} // namespace kforge
