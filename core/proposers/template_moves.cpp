#include "proposers/template_moves.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace kforge::moves {

std::string pointKey(const std::string &templateId, const nlohmann::json &params)
{
    return templateId + params.dump();
}

const char *rankName(Rank r)
{
    switch (r) {
    case Rank::Improving:
        return "improving";
    case Rank::Unexplored:
        return "unexplored";
    case Rank::TriedElsewhere:
        return "value tried elsewhere";
    case Rank::Combined:
        return "two changes together, each worse alone";
    case Rank::BeyondWorse:
        return "beyond a worse point";
    }
    return "";
}

void Evidence::measure(const std::string &templateId, const nlohmann::json &params, double s)
{
    const std::string key = pointKey(templateId, params);
    seen.insert(key);
    auto &list = evaluated[templateId];
    if (score.count(key))
        for (auto &[p, old] : list)
            if (p == params)
                old = s;
    if (!score.count(key))
        list.push_back({params, s});
    score[key] = s;
}

namespace {

bool validPoint(const KernelTemplate &t, const nlohmann::json &p, const OperatorCard &card)
{
    return !t.valid || t.valid(p, card);
}

std::optional<size_t> indexOf(const std::vector<nlohmann::json> &values, const nlohmann::json &v)
{
    const auto it = std::find(values.begin(), values.end(), v);
    if (it == values.end())
        return std::nullopt;
    return size_t(it - values.begin());
}

// The nearest evaluated point's score walking from index `i` in direction `d` (the origin excluded).
// The nearest measured point from index i of `name`'s values in direction d: its index and score.
std::optional<std::pair<size_t, double>> nearestMeasured(const KernelTemplate &t, const nlohmann::json &origin, const std::string &name,
                                                         const std::vector<nlohmann::json> &values, size_t i, int d, const Evidence &e)
{
    for (long j = long(i) + d; j >= 0 && j < long(values.size()); j += d) {
        nlohmann::json y = origin;
        y[name] = values[size_t(j)];
        const auto s = e.score.find(pointKey(t.id, y));
        if (s != e.score.end())
            return std::pair{size_t(j), s->second};
    }
    return std::nullopt;
}

std::optional<double> nearestScore(const KernelTemplate &t, const nlohmann::json &origin, const std::string &name,
                                   const std::vector<nlohmann::json> &values, size_t i, int d, const Evidence &e)
{
    const auto m = nearestMeasured(t, origin, name, values, i, d, e);
    return m ? std::optional<double>(m->second) : std::nullopt;
}

// A move that changes two parameters, a and b: named "a and b", its from and to as [a's, b's].
Move twoParameterMove(const KernelTemplate *t, nlohmann::json params, size_t oi, const std::string &a, const nlohmann::json &fromA,
                      const nlohmann::json &toA, const std::string &b, const nlohmann::json &fromB, const nlohmann::json &toB, Rank rank)
{
    return Move{t, std::move(params), oi, a + " and " + b, nlohmann::json::array({fromA, fromB}), nlohmann::json::array({toA, toB}), rank};
}

// Two one-parameter changes that each did worse from `o` alone, made together: when the best point is
// a local best on every line measured, the best may lie across two parameters that only help together
// (more rows per block with more unrolling). Each parameter's best measured neighbour of o, the pairs
// of parameters tried in order of their neighbours' summed scores; the first valid unseen pair.
std::optional<Move> combinedMove(const Origin &o, size_t oi, const OperatorCard &card, const Evidence &e)
{
    const auto &t = *o.tmpl;
    struct Change {
        std::string name;
        nlohmann::json from, to;
        double score;
    };
    std::vector<Change> changes;
    for (const auto &[name, values] : t.space) {
        const auto at = indexOf(values, o.params.value(name, nlohmann::json()));
        if (values.size() < 2 || !at)
            continue;
        std::optional<Change> bestHere;
        for (int d : {-1, +1})
            if (const auto m = nearestMeasured(t, o.params, name, values, *at, d, e); m && m->second > 0 && (!bestHere || m->second > bestHere->score))
                bestHere = Change{name, values[*at], values[m->first], m->second};
        if (bestHere)
            changes.push_back(*bestHere);
    }
    std::vector<std::pair<size_t, size_t>> pairs;
    for (size_t a = 0; a < changes.size(); ++a)
        for (size_t b = a + 1; b < changes.size(); ++b)
            pairs.push_back({a, b});
    std::stable_sort(pairs.begin(), pairs.end(), [&](const auto &x, const auto &y) {
        return changes[x.first].score + changes[x.second].score > changes[y.first].score + changes[y.second].score;
    });
    for (const auto &[a, b] : pairs) {
        nlohmann::json y = o.params;
        y[changes[a].name] = changes[a].to;
        y[changes[b].name] = changes[b].to;
        if (e.isSeen(t.id, y) || !validPoint(t, y, card))
            continue;
        return twoParameterMove(o.tmpl, y, oi, changes[a].name, changes[a].from, changes[a].to, changes[b].name, changes[b].from, changes[b].to,
                                Rank::Combined);
    }
    return std::nullopt;
}

// A line's next value is invalid with the other parameters as they are (a block too large for the rows
// per block, say), and no valid value lies beyond it: the nearest change of one other parameter that
// makes it valid and unseen (smallest index distance; parameters in the space's order on a tie). Without
// it, a coupled rule ends the line where the best may lie just past it.
struct Repair {
    nlohmann::json point;
    std::string also;
    nlohmann::json from, to;
};

std::optional<Repair> repaired(const KernelTemplate &t, const nlohmann::json &invalid, const std::string &name, const OperatorCard &card,
                               const Evidence &e)
{
    std::optional<Repair> best;
    size_t bestDistance = 0;
    for (const auto &[other, values] : t.space) {
        if (other == name)
            continue;
        const auto at = indexOf(values, invalid.value(other, nlohmann::json()));
        if (!at)
            continue;
        for (size_t j = 0; j < values.size(); ++j) {
            const size_t distance = j > *at ? j - *at : *at - j;
            if (distance == 0 || (best && distance >= bestDistance))
                continue;
            nlohmann::json y = invalid;
            y[other] = values[j];
            if (e.isSeen(t.id, y) || !validPoint(t, y, card))
                continue;
            best = Repair{y, other, values[*at], values[j]};
            bestDistance = distance;
        }
    }
    return best;
}

} // namespace

std::optional<Move> bestMove(const std::vector<Origin> &origins, const OperatorCard &card, const Evidence &e, std::mt19937_64 &rng)
{
    // (group, origin, rank, evaluated on the line, -values left that way, rng): the smallest wins. The
    // groups: improving or unexplored, tried elsewhere, beyond worse. A repaired move (two parameters
    // changed) comes after the plain moves of its rank.
    using Key = std::tuple<int, size_t, int, int, long, double>;
    std::optional<Key> bestKey;
    std::optional<Move> best;
    std::uniform_real_distribution<double> jitter(0, 1);
    for (size_t oi = 0; oi < origins.size(); ++oi) {
        const auto &o = origins[oi];
        if (!o.tmpl)
            continue;
        const auto &t = *o.tmpl;
        for (const auto &[name, values] : t.space) {
            const auto at = indexOf(values, o.params.value(name, nlohmann::json()));
            if (values.size() < 2 || !at)
                continue;
            const size_t i = *at;
            int lineEvaluated = 0;
            for (size_t j = 0; j < values.size(); ++j) {
                nlohmann::json y = o.params;
                y[name] = values[j];
                lineEvaluated += j != i && e.score.count(pointKey(t.id, y));
            }
            for (int d : {-1, +1}) {
                std::optional<double> ahead; // the nearest evaluated point passed over on the way
                std::optional<nlohmann::json> target, firstInvalid;
                for (long j = long(i) + d; j >= 0 && j < long(values.size()); j += d) {
                    nlohmann::json y = o.params;
                    y[name] = values[size_t(j)];
                    const std::string k = pointKey(t.id, y);
                    if (e.seen.count(k)) {
                        const auto s = e.score.find(k);
                        if (s != e.score.end() && !ahead)
                            ahead = s->second;
                        continue;
                    }
                    if (!validPoint(t, y, card)) {
                        if (!firstInvalid)
                            firstInvalid = std::move(y);
                        continue;
                    }
                    target = std::move(y);
                    break;
                }
                std::optional<Repair> repair;
                if (!target && firstInvalid && (repair = repaired(t, *firstInvalid, name, card, e)))
                    target = repair->point;
                if (!target)
                    continue;
                const auto back = nearestScore(t, o.params, name, values, i, -d, e);
                // Tried elsewhere and worse: on other lines (other values of the other parameters), the
                // value moved to did worse than the origin's value more often than better, each pair
                // measured on the same line. Not "worse than the origin": from the best point every
                // other point is worse, so that would say nothing.
                int worsePairs = 0, betterPairs = 0;
                if (const auto ev = e.evaluated.find(t.id); ev != e.evaluated.end())
                    for (const auto &[p, s] : ev->second) {
                        if (p.value(name, nlohmann::json()) != (*target)[name])
                            continue;
                        nlohmann::json partner = p;
                        partner[name] = values[i];
                        const auto ps = e.score.find(pointKey(t.id, partner));
                        if (ps == e.score.end())
                            continue;
                        worsePairs += s < ps->second;
                        betterPairs += s > ps->second;
                    }
                const bool triedWorse = worsePairs > betterPairs;
                const Rank rank = ahead && *ahead < o.score ? Rank::BeyondWorse
                                : back && *back < o.score   ? Rank::Improving
                                : triedWorse                ? Rank::TriedElsewhere
                                                            : Rank::Unexplored;
                const int group = rank == Rank::BeyondWorse ? 2 : rank == Rank::TriedElsewhere ? 1 : 0;
                const long left = d > 0 ? long(values.size() - 1 - i) : long(i);
                const Key key{group, oi, int(rank) * 2 + (repair ? 1 : 0), lineEvaluated, -left, jitter(rng)};
                if (!bestKey || key < *bestKey) {
                    bestKey = key;
                    best = repair ? twoParameterMove(o.tmpl, *target, oi, name, values[i], (*target)[name], repair->also, repair->from, repair->to, rank)
                                  : Move{o.tmpl, *target, oi, name, values[i], (*target)[name], rank};
                }
            }
        }
    }
    // The best origin has no improving or unexplored move left on any line: before the next origin's,
    // the two changes that did least badly from it, together.
    if (!origins.empty() && origins.front().tmpl && origins.front().score > 0 && (!bestKey || std::get<0>(*bestKey) > 0 || std::get<1>(*bestKey) > 0))
        if (auto m = combinedMove(origins.front(), 0, card, e))
            return m;
    return best;
}

nlohmann::json centre(const KernelTemplate &t)
{
    nlohmann::json c = nlohmann::json::object();
    for (const auto &[name, values] : t.space)
        if (!values.empty())
            c[name] = values[(values.size() - 1) / 2];
    return c;
}

std::optional<nlohmann::json> nearestUnseen(const KernelTemplate &t, const nlohmann::json &target, const OperatorCard &card, const Evidence &e,
                                            std::mt19937_64 &rng)
{
    std::vector<std::pair<std::string, const std::vector<nlohmann::json> *>> dims;
    for (const auto &[name, values] : t.space) {
        if (values.empty())
            return std::nullopt;
        dims.push_back({name, &values});
    }
    std::vector<std::optional<size_t>> targetIdx;
    for (const auto &[name, values] : dims)
        targetIdx.push_back(indexOf(*values, target.value(name, nlohmann::json())));
    std::uniform_real_distribution<double> jitter(0, 1e-6);
    std::optional<nlohmann::json> best;
    double bestD = 0;
    std::vector<size_t> idx(dims.size(), 0);
    for (;;) { // every point of the grid, as an odometer
        nlohmann::json p = nlohmann::json::object();
        double dist = 0;
        for (size_t d = 0; d < dims.size(); ++d) {
            const auto &values = *dims[d].second;
            p[dims[d].first] = values[idx[d]];
            if (values.size() > 1)
                dist += targetIdx[d] ? std::abs(double(idx[d]) - double(*targetIdx[d])) / double(values.size() - 1) : 0.5;
        }
        if (!e.isSeen(t.id, p) && validPoint(t, p, card)) {
            dist += jitter(rng);
            if (!best || dist < bestD) {
                bestD = dist;
                best = std::move(p);
            }
        }
        size_t d = 0;
        while (d < dims.size() && ++idx[d] == dims[d].second->size())
            idx[d++] = 0;
        if (d == dims.size())
            break;
    }
    return best;
}

} // namespace kforge::moves
