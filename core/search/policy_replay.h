#pragma once
// The search's policy run against known measurements instead of a worker: what SearchEngine does with
// one worker (selection by UCT with progressive widening, the proposer's expansion, the reward, the
// backup, the proposer told each result, dead-end pruning), with no store and no I/O. The sweep bench
// replays it against an exhaustive sweep; tests run it on hand-built spaces.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proposers/proposer.h"
#include "search/mcts.h"

namespace kforge {

struct ReplayStep {
    std::string templateId;
    nlohmann::json params;
    double speedup = 0; // 0: not correct
    int node = 0, parent = 0; // tree indices, 0 the root
    std::string rationale;
};

// Speedup of a point (0 when it fails), or nullopt when the point is not in the measured space (an error).
using Measure = std::function<std::optional<double>(const std::string &templateId, const nlohmann::json &params)>;

// A lesson made at another shape of the operator: a template and its point.
struct ReplayLesson {
    std::string templateId;
    nlohmann::json point;
};

// Runs until `budget` evaluations, until `enough` says yes to a step, or until nothing is left to
// propose; returns the steps in evaluation order. With a lesson, the proposer's adaptation of it is the
// second evaluation, as SearchEngine's warm start from a lesson of another shape (none when the proposer
// cannot adapt it). Throws Error when the proposer leaves the space.
std::vector<ReplayStep> replaySearch(Proposer &proposer, const OperatorCard &card, const MctsParams &params, uint64_t seed, int budget,
                                     const Measure &measure, const std::function<bool(const ReplayStep &)> &enough = {},
                                     const std::optional<ReplayLesson> &lesson = std::nullopt);

} // namespace kforge
