#pragma once
// Coordinate moves over a template's tuning space, informed by what was measured: the template
// proposer's expansion. A move changes one parameter of an origin point to the nearest value along its
// ordered list that is valid and not yet proposed. Moves are ranked by what the measured points say:
//   improving       the evaluated point on the other side of the origin, on its line, is worse (the
//                   line rises this way: a pattern search's continuation);
//   unexplored      nothing measured says otherwise;
//   tried elsewhere on other lines (other values of the other parameters), the value moved to did worse
//                   than the origin's value, pair by pair, more often than better: the prior that
//                   parameters act apart;
//   beyond worse    the nearest evaluated point this way, on the line, is worse than the origin (the
//                   origin is a local best on that line);
//   combined        two parameters changed at once: the best origin's two least bad one-step changes,
//                   each measured and worse alone (a local best on every line may hide an optimum
//                   across two parameters that only help together).
// A line whose next values are all invalid with the other parameters as they are (a coupled rule: block
// size times rows per block) goes on by a repaired move: the first invalid value, with the nearest
// change of one other parameter that makes it valid and unseen. It takes the rank its line gives and
// comes after the plain moves of that rank.
// The best move is the first origin's (origins come best first) improving or unexplored one; when it
// has none, its combined move; else the next origin's improving or unexplored one; then moves to values
// tried elsewhere (on other lines, the value did worse than the origin's value, pair by pair), then
// moves beyond a worse point, in the same order. Within an origin: improving before unexplored, then
// the line with fewest evaluated points, then the side with more values left (under a uniform prior the best is more likely there), then the
// caller's rng. On a space where parameters act apart and each is unimodal along its order, this walks
// every line at most once from one start, so it reaches the best in at most 1 + sum(values - 1)
// evaluations. Nothing here reads a family or a fitted constant: only the space's order and the
// measured points.
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "proposers/template_library.h"

namespace kforge::moves {

std::string pointKey(const std::string &templateId, const nlohmann::json &params);

// What a search knows of points: those proposed (evaluated or in flight) and, once evaluated, their
// score: the speedup when correct, -1 when not, so every failure ranks below every correct point.
struct Evidence {
    std::set<std::string> seen;
    std::map<std::string, double> score;
    std::map<std::string, std::vector<std::pair<nlohmann::json, double>>> evaluated; // per template: point, score
    bool isSeen(const std::string &templateId, const nlohmann::json &params) const { return seen.count(pointKey(templateId, params)) > 0; }
    void propose(const std::string &templateId, const nlohmann::json &params) { seen.insert(pointKey(templateId, params)); }
    void measure(const std::string &templateId, const nlohmann::json &params, double s); // seen too; a second measurement replaces the first
};

enum class Rank { Improving = 0, Unexplored = 1, TriedElsewhere = 2, BeyondWorse = 3, Combined = 4 };
const char *rankName(Rank r);

struct Origin {
    const KernelTemplate *tmpl = nullptr;
    nlohmann::json params;
    double score = -1;
    int64_t node = 0; // the node it was measured on, 0 when unknown
};

struct Move {
    const KernelTemplate *tmpl = nullptr;
    nlohmann::json params;
    size_t origin = 0; // index into the origins given
    std::string parameter;
    nlohmann::json from, to;
    Rank rank = Rank::Unexplored;
};

// The best one-parameter move from `origins` (best first), or nullopt when no origin has a valid point
// not yet seen on any of its lines.
std::optional<Move> bestMove(const std::vector<Origin> &origins, const OperatorCard &card, const Evidence &e, std::mt19937_64 &rng);

// The valid point not yet seen nearest to `target` (each parameter's index distance over its number of
// values, summed; a value not in the list counts as half its range away), ties by the rng; nullopt when
// the template's whole space has been seen.
std::optional<nlohmann::json> nearestUnseen(const KernelTemplate &t, const nlohmann::json &target, const OperatorCard &card, const Evidence &e,
                                            std::mt19937_64 &rng);

// The middle of each parameter's ordered values (the lower middle of an even count): a template's
// start when it has no seed.
nlohmann::json centre(const KernelTemplate &t);

} // namespace kforge::moves
