// MCTS against an exhaustive sweep, per template family. For each family's card (a stated small shape),
// every valid point of every template of the backend is evaluated on this device through the real
// worker (where a space is too large, each parameter's values are cut to V evenly spaced ones, the
// first and last included, until at most --max-points valid points remain: that subset is then the
// space, for the sweep and the search alike). Then the search's policy (MctsTree's selection, widening
// and pruning, the template proposer, the reward the engine gives) runs with several seeds, each
// evaluation looked up in the sweep, and we count the evaluations it needed to come within 3% of the
// sweep's best speedup. Prints a Markdown table: the evaluations each search needed, in absolute numbers
// and as a fraction of the space, beside 20% of the space in evaluations (under one for spaces under 5
// points, where only a first proposal within 3% can pass) and what a random order expects; read two
// ways: at most 20% of the points, and at most ceil(20%) of them, at least one evaluation.
//
// --first spread replays another choice of the baseline's children after the templates' seeds: the
// valid point farthest from those tried (each parameter's values by index, normalised), instead of the
// proposer's own (a template without a seed starts at the middle of its values, then the root's
// children are moves from the best so far). Neither asks anything of the measured values.
//
// --shape k=v,... sweeps other sizes (each symbol a family's card has is set; the cache keys such a
// sweep as family@shape). --lessons-at k=v,...|default adds a second replay per family that starts from
// a lesson: the family's best point swept at that other shape, re-made for this one by the template
// proposer (TemplateProposer::adapt), as SearchEngine's warm start does with a lesson of the nearest
// shape. The lesson's shape is swept too when the cache lacks it.
//
//   kforge-mcts-sweep-bench [--backend cpu|cuda] [--families a,b] [--max-points N] [--seeds N]
//                           [--samples N] [--workers N] [--worker CMD] [--cache FILE] [--first seeds|spread]
//                           [--exploration C] [--best-backup 1] [--shape k=v,...] [--lessons-at k=v,...|default]
//                           [--confirm N] [--rank time|ratio]
//
// --confirm N measures every point within 10% of a family's best N times again, in this run, and
// judges the search by the medians of those (the search itself is still shown the sweep's measurement,
// as a live search sees one). The cache keeps a confirmed point's measurements as a list, the sweep's first.
//
// --rank: what the replayed search ranks candidates by and what it is judged by; by default the search's
// own rule for the backend (search/search_value.h). "time" (the CPU's): each measurement's candidate
// median, the search's values normalised by the first evaluation's baseline as SearchValue does, the
// points' values by the median of every baseline time the family's sweep took (the cache keeps each
// measurement's candidate median under "#candidate_us"; a family swept before it did is ranked by
// ratio). "ratio": each evaluation's own speedup.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "pool/worker_pool.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "search/mcts.h"
#include "search/policy_replay.h"
#include "search/search_value.h"
#include "util/error.h"
#include "util/files.h"
#include "util/options.h"
#include "util/stats.h"

using namespace kforge;

namespace {

constexpr double kWithin = 1.03; // "within 3% of the sweep's best"

// A small shape per family, where the sweep stays short but the kernels still differ.
ShapeBindings benchShape(const std::string &family, const std::string &backend)
{
    const bool gpu = backend == "cuda";
    if (family == "group_norm")
        return {{"n", 4}, {"c", 64}, {"hw", gpu ? 4096 : 256}, {"groups", 8}};
    if (nchwFamily(family)) // instance norm and the batch norms: statistics per row n * c, or per channel c
        return {{"n", 4}, {"c", 16}, {"hw", gpu ? 4096 : 256}};
    if (family == "cross_entropy")
        return {{"rows", gpu ? 256 : 32}, {"vocab", gpu ? 32000 : 2048}};
    if (family == "scaled_masked_softmax") // the mask has mrows rows, broadcast over the rows
        return {{"rows", gpu ? 4096 : 128}, {"cols", gpu ? 4096 : 512}, {"mrows", gpu ? 64 : 16}};
    if (dimFamily(family))
        return {{"outer", 8}, {"dim", gpu ? 300 : 64}, {"inner", gpu ? 1000 : 128}};
    if (family.rfind("rotary_embedding", 0) == 0)
        return {{"b", gpu ? 8 : 2}, {"s", gpu ? 512 : 64}, {"h", gpu ? 32 : 4}, {"d", gpu ? 128 : 64}};
    return {{"rows", gpu ? 4096 : 128}, {"cols", gpu ? 4096 : 512}};
}

// `keep` evenly spaced values, the first and last included, and `also` (the template's seed value, so
// the search's first try is in the swept space), in the space's order.
std::vector<nlohmann::json> cut(const std::vector<nlohmann::json> &values, size_t keep, const nlohmann::json &also)
{
    if (values.size() <= keep)
        return values;
    std::set<size_t> idx;
    for (size_t i = 0; i < keep; ++i)
        idx.insert(i * (values.size() - 1) / (keep - 1));
    for (size_t i = 0; i < values.size(); ++i)
        if (values[i] == also)
            idx.insert(i);
    std::vector<nlohmann::json> out;
    for (size_t i : idx)
        out.push_back(values[i]);
    return out;
}

std::vector<nlohmann::json> validPoints(const KernelTemplate &t, const OperatorCard &card)
{
    std::vector<nlohmann::json> out;
    std::vector<std::pair<std::string, std::vector<nlohmann::json>>> dims(t.space.begin(), t.space.end());
    std::vector<size_t> idx(dims.size(), 0);
    for (;;) {
        nlohmann::json p = nlohmann::json::object();
        for (size_t d = 0; d < dims.size(); ++d)
            p[dims[d].first] = dims[d].second[idx[d]];
        if (!t.valid || t.valid(p, card))
            out.push_back(p);
        size_t d = 0;
        while (d < dims.size() && ++idx[d] == dims[d].second.size())
            idx[d++] = 0;
        if (d == dims.size())
            break;
    }
    return out;
}

struct Family {
    std::string name; // the family, and @shape when swept at other sizes than benchShape's (the cache key)
    OperatorCard card;
    TemplateLibrary lib; // the family's templates, their spaces cut to the swept subset
    size_t valuesKept = 0; // V, 0: the whole space
    // template + point -> each measured speedup, 0 when not correct. The first is the sweep's, what the
    // replayed search is shown (a live search measures a point once); --confirm measures the points near
    // the best again, all in one lease, and those confirmations alone then give the point's value.
    std::map<std::string, std::vector<double>> runs;
    std::map<std::string, std::vector<double>> candidateUs; // each run's candidate median (0 when not correct), where known
    bool byCandidateTime = false; // rank by candidate time (--rank); set by rank() only where every run's time is known
    double baselineUs = 0;        // by candidate time: the median of every run's baseline median
    std::map<std::string, double> value; // what the search is judged by; rank() derives it, the best and the failures from runs
    std::string best; // by value
    double bestSpeedup = 0;
    int failed = 0;

    // The value of a run: its speedup, or by candidate time the family's baseline over its candidate's median.
    double runValue(const std::string &k, size_t i) const
    {
        const double s = runs.at(k)[i];
        return byCandidateTime && s > 0 ? baselineUs / candidateUs.at(k)[i] : s;
    }

    void rank(bool wantCandidateTime)
    {
        value.clear();
        best.clear();
        bestSpeedup = 0;
        failed = 0;
        std::vector<double> baselines;
        byCandidateTime = wantCandidateTime;
        for (const auto &[k, r] : runs) {
            const auto c = candidateUs.find(k);
            if (c == candidateUs.end() || c->second.size() != r.size()) {
                byCandidateTime = false;
                break;
            }
            for (size_t i = 0; i < r.size(); ++i)
                if (r[i] > 0 && c->second[i] > 0)
                    baselines.push_back(r[i] * c->second[i]);
        }
        byCandidateTime = byCandidateTime && !baselines.empty();
        baselineUs = byCandidateTime ? quantile(baselines, 0.5) : 0.0;
        for (const auto &[k, r] : runs) {
            std::vector<double> confirmations;
            for (size_t i = r.size() > 1 ? 1 : 0; i < r.size(); ++i)
                confirmations.push_back(runValue(k, i));
            const double s = *std::min_element(confirmations.begin(), confirmations.end()) <= 0 ? 0.0 : quantile(confirmations, 0.5);
            value[k] = s;
            failed += s <= 0;
            if (s > bestSpeedup) {
                bestSpeedup = s;
                best = k;
            }
        }
    }
};

std::string key(const std::string &templateId, const nlohmann::json &params)
{
    return templateId + params.dump();
}

// The family's templates with spaces cut until at most maxPoints valid points remain.
void chooseSpace(Family &f, const std::vector<const KernelTemplate *> &templates, size_t maxPoints)
{
    size_t widest = 1;
    for (const auto *t : templates)
        for (const auto &[k, v] : t->space)
            widest = std::max(widest, v.size());
    for (size_t keep = widest; keep >= 2; --keep) {
        TemplateLibrary lib;
        size_t points = 0;
        for (const auto *t : templates) {
            KernelTemplate c = *t;
            const nlohmann::json seed = t->seed ? t->seed(f.card) : nlohmann::json::object();
            for (auto &[k, v] : c.space)
                v = cut(v, keep, seed.value(k, nlohmann::json()));
            points += validPoints(c, f.card).size();
            lib.add(std::move(c));
        }
        if (points <= maxPoints || keep == 2) {
            f.lib = std::move(lib);
            f.valuesKept = keep == widest ? 0 : keep;
            return;
        }
    }
}

// Evaluates `work` (cache keys and their candidates) on the pool, keeping it busy, and records each
// verdict in `f`. Throws Error when the worker could not carry a request out.
void evaluate(Family &f, WorkerPool &pool, const std::string &backend, const EvalOptions &eo,
              const std::vector<std::pair<std::string, Candidate>> &work, const char *what)
{
    if (work.empty())
        return;
    pool.start(); // at the first family the cache lacks (start is idempotent): a replay of a whole cache starts no worker
    std::mutex m;
    std::condition_variable cv;
    size_t next = 0, done = 0;
    int inFlight = 0;
    // A verdict that says nothing of the kernel (the worker could not carry the request out: no device
    // for the backend, say) is not a measurement: cached as 0 it would read as a failed kernel forever.
    std::string notMeasured;
    const int depth = pool.size() + pool.lookahead(backend);
    // Progress on stderr, a line a verdict: a sweep of many families runs for minutes, and one cut short
    // by its time limit should still say how far it got and what each evaluation took.
    const auto t0 = std::chrono::steady_clock::now();
    std::fprintf(stderr, "%s: %s %zu points (%zu known), %d in flight\n", f.name.c_str(), what, work.size(), f.runs.size(), depth);
    std::unique_lock lock(m);
    while (done < work.size()) {
        while (next < work.size() && inFlight < depth) {
            const size_t i = next++;
            ++inFlight;
            lock.unlock();
            pool.submit(f.card, work[i].second, eo, [&, i](Verdict v) {
                std::lock_guard g(m);
                if (v.status == VerdictStatus::Error) {
                    if (notMeasured.empty())
                        notMeasured = v.reasons.empty() ? statusName(v.status) : v.reasons.front().message.substr(0, 200);
                } else {
                    f.runs[work[i].first].push_back(v.correct() ? v.speedup : 0.0);
                    f.candidateUs[work[i].first].push_back(v.correct() ? v.candidate.summary.median : 0.0);
                }
                std::fprintf(stderr, "  %6.1f s %s %s %.3fx%s\n",
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), work[i].first.c_str(),
                             statusName(v.status).c_str(), v.speedup, v.reasons.empty() ? "" : (" " + v.reasons.front().message.substr(0, 160)).c_str());
                --inFlight;
                ++done;
                cv.notify_all();
            });
            lock.lock();
        }
        // Wake for room to submit only while there is something left to submit: once every point is
        // out, "room" is always true, and a wait that returns at once never lets go of the lock that the
        // last verdicts' callbacks need (the H200 sweep stopped at 33 of 36 that way).
        cv.wait(lock, [&] { return (next < work.size() && inFlight < depth) || done == work.size(); });
    }
    if (!notMeasured.empty())
        throw Error("the worker could not evaluate its points: " + notMeasured);
}

// A point's measurements in the cache: one speedup, or the list of them once confirmed.
std::vector<double> cachedRuns(const nlohmann::json &v)
{
    if (v.is_array())
        return v.get<std::vector<double>>();
    return {v.get<double>()};
}

// The cache's key for the candidates' median times, beside the families' speedups.
constexpr const char *kCandidateTimes = "#candidate_us";
bool rankByCandidateTime = false; // --rank

// The best of a sweep is the largest of many noisy values, so it reads high, and "within 3% of it"
// would judge the search by noise. With `confirmations` N, every point whose value is within 10% of the
// best is measured N times again, a round over all of them at a time; its value is then the median of
// those N, all taken in this run (a cached sweep may come from another day or another GPU of the same
// kind). Rounds go on while the best, re-measured, moves and brings other points within 10% of it.
constexpr double kConfirmBand = 1.10;

// Evaluates every point of the family's (cut) space, keeping the pool busy; a family already in
// `cache` (a JSON file of earlier sweeps on this machine, --cache) is read from it instead.
void sweep(Family &f, WorkerPool &pool, const std::string &backend, const EvalOptions &eo, nlohmann::json &cache, int confirmations)
{
    // The cached points of this space are read; only those the cache lacks are evaluated (a space
    // that changed since, with a template's seed, keeps what was measured of it).
    TemplateProposer renderer(backend, f.lib);
    std::map<std::string, std::pair<const KernelTemplate *, nlohmann::json>> space; // key -> template and point
    std::vector<std::string> order; // the space's keys, template by template, as they are swept
    for (const auto *t : f.lib.forFamily(f.card.family, backend))
        for (const auto &p : validPoints(*t, f.card)) {
            order.push_back(key(t->id, p));
            space[order.back()] = {t, p};
        }
    const auto candidate = [&](const std::string &k) {
        const auto &[t, p] = space.at(k);
        return std::pair{k, renderer.render(*t, p, f.card).candidate};
    };
    std::vector<std::pair<std::string, Candidate>> work;
    const nlohmann::json known = cache.contains(f.name) ? cache[f.name] : nlohmann::json::object();
    const nlohmann::json knownTimes = cache.contains(kCandidateTimes) && cache[kCandidateTimes].contains(f.name)
                                          ? cache[kCandidateTimes][f.name] : nlohmann::json::object();
    for (const auto &k : order)
        if (const auto it = known.find(k); it != known.end()) {
            f.runs[k] = cachedRuns(*it);
            if (const auto t = knownTimes.find(k); t != knownTimes.end())
                f.candidateUs[k] = t->get<std::vector<double>>();
        } else {
            work.push_back(candidate(k));
        }
    evaluate(f, pool, backend, eo, work, "sweeping");
    f.rank(rankByCandidateTime);
    // Each round adds a measurement to at least one point and none has more than N, so the rounds end.
    while (confirmations > 0) {
        std::vector<std::pair<std::string, Candidate>> again;
        for (const auto &[k, s] : f.value)
            if (s > 0 && s * kConfirmBand >= f.bestSpeedup && int(f.runs[k].size()) < 1 + confirmations)
                again.push_back(candidate(k));
        if (again.empty())
            break;
        evaluate(f, pool, backend, eo, again, "confirming");
        f.rank(rankByCandidateTime);
    }
    for (const auto &[k, r] : f.runs) // what the cache held of points outside this space stays
        cache[f.name][k] = r.size() == 1 ? nlohmann::json(r.front()) : nlohmann::json(r);
    for (const auto &[k, t] : f.candidateUs)
        cache[kCandidateTimes][f.name][k] = t;
}

// The template proposer, except that the baseline's children after the templates' seeds are the unseen
// valid point farthest from the points tried (in index space, each parameter normalised to [0, 1]; the
// template with the fewest tries first), ties broken by the replay's seed: a space-filling start that
// reads nothing of the measurements, to hold the proposer's own start (the seed, else the middle of each
// parameter's values, then moves from the best) against. Children of other nodes are the proposer's.
class SpreadProposer : public Proposer {
public:
    SpreadProposer(std::string backend, const TemplateLibrary &lib) : m_backend(std::move(backend)), m_lib(lib), m_inner(m_backend, lib) {}
    std::string name() const override { return "spread"; }
    void finished(const NodeRecord &node) override { m_inner.finished(node); }
    std::optional<Proposal> propose(const OperatorCard &card, const NodeRecord *parent, std::mt19937_64 &rng) override
    {
        if (parent) {
            auto p = m_inner.propose(card, parent, rng);
            if (p)
                m_tried[p->templateId].push_back(p->params);
            return p;
        }
        const auto templates = m_lib.forFamily(card.family, m_backend);
        for (const auto *t : templates) // the seeds first, as the template proposer gives them
            if (t->seed) {
                const auto seed = t->seed(card);
                if ((!t->valid || t->valid(seed, card)) && !seen(t->id, seed))
                    return take(*t, seed, card, "expert starting point for " + t->id);
            }
        const KernelTemplate *bestT = nullptr;
        nlohmann::json bestP;
        double bestD = -1;
        size_t fewest = SIZE_MAX;
        for (const auto *t : templates)
            fewest = std::min(fewest, m_tried[t->id].size());
        for (const auto *t : templates) {
            if (m_tried[t->id].size() > fewest && bestT)
                continue;
            for (const auto &p : validPoints(*t, card)) {
                if (seen(t->id, p))
                    continue;
                double d = 1e9;
                for (const auto &q : m_tried[t->id])
                    d = std::min(d, distance(*t, p, q));
                d += std::uniform_real_distribution<double>(0, 1e-6)(rng); // ties: the replay's seed decides
                if (d > bestD) {
                    bestD = d;
                    bestT = t;
                    bestP = p;
                }
            }
        }
        if (!bestT)
            return m_inner.propose(card, nullptr, rng);
        return take(*bestT, bestP, card, "the point farthest from those tried");
    }

private:
    bool seen(const std::string &id, const nlohmann::json &p)
    {
        const auto &v = m_tried[id];
        return std::find(v.begin(), v.end(), p) != v.end();
    }
    static double distance(const KernelTemplate &t, const nlohmann::json &a, const nlohmann::json &b)
    {
        double d = 0;
        for (const auto &[name, values] : t.space) {
            if (values.size() < 2)
                continue;
            const auto ia = std::find(values.begin(), values.end(), a.value(name, nlohmann::json())) - values.begin();
            const auto ib = std::find(values.begin(), values.end(), b.value(name, nlohmann::json())) - values.begin();
            d += std::abs(double(ia - ib)) / double(values.size() - 1);
        }
        return d;
    }
    Proposal take(const KernelTemplate &t, const nlohmann::json &p, const OperatorCard &card, const std::string &why)
    {
        m_tried[t.id].push_back(p);
        NodeRecord n;
        n.templateId = t.id;
        n.params = p;
        n.parentId = 0;
        n.status = "running";
        m_inner.known(n); // so its own moves do not propose this point again
        Proposal prop = m_inner.render(t, p, card);
        prop.rationale = why;
        return prop;
    }

    std::string m_backend;
    const TemplateLibrary &m_lib;
    TemplateProposer m_inner;
    std::map<std::string, std::vector<nlohmann::json>> m_tried;
};

bool traceReplays = false;

struct Replay {
    int needed = 0;       // evaluations until one within 3% of the best (the number of points when never)
    double first = 0;     // the first evaluation's speedup over the best (0: it failed)
    double atBudget = 0;  // the best of the first ceil(20%) evaluations (at least one) over the sweep's best
};

// The search's policy (search/policy_replay.h) replayed against the sweep, from a lesson when given.
Replay replay(const Family &f, const std::string &backend, uint64_t seed, const MctsParams &params, const std::string &first,
              const std::optional<ReplayLesson> &lesson = std::nullopt)
{
    TemplateProposer templates(backend, f.lib);
    SpreadProposer spreading(backend, f.lib);
    Proposer &proposer = first == "seeds" ? static_cast<Proposer &>(templates) : spreading;
    // What a live search is shown: each point's first measurement, ranked as SearchValue ranks it.
    SearchValue searchValue(f.byCandidateTime);
    const Measure measure = [&](const std::string &id, const nlohmann::json &p) -> std::optional<double> {
        const auto it = f.runs.find(key(id, p));
        if (it == f.runs.end())
            return std::nullopt;
        return searchValue.of(it->second.front(), f.byCandidateTime ? f.candidateUs.at(it->first).front() : 0.0);
    };
    // The search decides on what it was shown (each point's first measurement) and is judged by the
    // points' values (their medians where confirmed).
    const auto valueOf = [&](const ReplayStep &s) { return f.value.at(key(s.templateId, s.params)); };
    const auto within = [&](const ReplayStep &s) { return valueOf(s) > 0 && valueOf(s) * kWithin >= f.bestSpeedup; };
    const int total = int(f.runs.size());
    const int budget = std::max(1, int(std::ceil(0.2 * total - 1e-9))); // ceil(20%), at least one evaluation
    // One run, on until one step is within 3% and the budget's steps are all there.
    int taken = 0;
    bool found = false;
    const auto steps = replaySearch(proposer, f.card, params, seed, total, measure, [&](const ReplayStep &s) {
        ++taken;
        found = found || within(s);
        return found && taken >= budget;
    }, lesson);
    if (traceReplays) // --trace 1: each replay's evaluations in order, on stderr
        for (size_t i = 0; i < steps.size(); ++i)
            std::fprintf(stderr, "%s seed %llu #%zu %s%s %.3f of the best (node %d from %d) %s\n", f.name.c_str(), (unsigned long long)seed, i + 1,
                         steps[i].templateId.c_str(), steps[i].params.dump().c_str(), valueOf(steps[i]) / f.bestSpeedup, steps[i].node,
                         steps[i].parent, steps[i].rationale.c_str());
    Replay r;
    const auto hit = std::find_if(steps.begin(), steps.end(), within);
    r.needed = hit != steps.end() ? int(hit - steps.begin()) + 1 : total;
    r.first = steps.empty() ? 0 : valueOf(steps.front()) / f.bestSpeedup;
    for (size_t i = 0; i < steps.size() && int(i) < budget; ++i)
        r.atBudget = std::max(r.atBudget, valueOf(steps[i]) / f.bestSpeedup);
    return r;
}

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string w; std::getline(in, w, ',');)
        if (!w.empty())
            out.push_back(w);
    return out;
}

// The family's bench shape with `overrides` set where the family has the symbol.
ShapeBindings shapeFor(const std::string &family, const std::string &backend, const ShapeBindings &overrides)
{
    auto shape = benchShape(family, backend);
    for (const auto &[k, v] : overrides)
        if (shape.count(k))
            shape[k] = v;
    return shape;
}

// Families skipped because their points could not be measured; the exit status says so.
int familiesNotSwept = 0;

// A family's card, space and sweep at `shape` (benchShape's when no override applies).
std::optional<Family> prepare(const std::string &fam, const std::string &backend, const ShapeBindings &overrides, size_t maxPoints,
                              WorkerPool &pool, const EvalOptions &eo, nlohmann::json &cache, int confirmations)
{
    Family f;
    const auto shape = shapeFor(fam, backend, overrides);
    f.name = shape == benchShape(fam, backend) ? fam : fam + "@" + shapeText(shape);
    try {
        f.card = makeCard(fam, shape);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: no card at %s: %s\n", fam.c_str(), shapeText(shape).c_str(), e.what());
        return std::nullopt;
    }
    chooseSpace(f, TemplateLibrary::builtin().forFamily(fam, backend), maxPoints);
    try {
        sweep(f, pool, backend, eo, cache, confirmations);
    } catch (const Error &e) {
        // A replay whose space has points the cache lacks, with no worker (or no device) to measure them;
        // nothing of the family is written to the cache.
        std::fprintf(stderr, "%s: not replayed: its space has points the cache lacks, and %s\n", f.name.c_str(), e.what());
        ++familiesNotSwept;
        return std::nullopt;
    }
    return f;
}

// The sweep's best as a lesson: its template and point (the key is the template id, then the point).
std::optional<ReplayLesson> bestAsLesson(const Family &f)
{
    const auto brace = f.best.find('{');
    if (f.bestSpeedup <= 0 || brace == std::string::npos)
        return std::nullopt;
    return ReplayLesson{f.best.substr(0, brace), nlohmann::json::parse(f.best.substr(brace))};
}

} // namespace

int main(int argc, char **argv)
{
    std::map<std::string, std::string> opt = {{"--backend", "cpu"}, {"--max-points", ""}, {"--seeds", "10"}, {"--samples", "10"},
                                              {"--workers", "1"}, {"--worker", ""}, {"--families", ""}, {"--cache", ""},
                                              {"--exploration", ""}, {"--best-backup", ""}, {"--first", "seeds"},
                                              {"--shape", ""}, {"--lessons-at", ""}, {"--trace", ""}, {"--confirm", "0"}, {"--rank", ""}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (!opt.count(a) || i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--backend cpu|cuda] [--families a,b] [--max-points N] [--seeds N] [--samples N] "
                                 "[--workers N] [--worker CMD] [--cache FILE] [--exploration C] [--best-backup 1] [--first seeds|spread] "
                                 "[--shape k=v,...] [--lessons-at k=v,...|default] [--trace 1] [--confirm N] [--rank time|ratio]\n", argv[0]);
            return 2;
        }
        opt[a] = argv[++i];
    }
    traceReplays = opt["--trace"] == "1";
    const std::string first = opt["--first"];
    if (first != "seeds" && first != "spread") {
        std::fprintf(stderr, "--first takes seeds or spread, not '%s'\n", first.c_str());
        return 2;
    }
    ShapeBindings shapeOverrides, lessonOverrides;
    const bool lessons = !opt["--lessons-at"].empty();
    const std::string backend = opt["--backend"];
    size_t maxPoints = backend == "cuda" ? 12 : 100;
    int seeds = 0, confirmations = 0;
    PoolOptions po;
    po.command = !opt["--worker"].empty() ? opt["--worker"] : std::string("'") + KFORGE_WORKER_PATH + "'";
    EvalOptions eo;
    eo.warmup = 2;
    eo.deadlineMs = 30000; // a point that hangs costs its family 30 s, not the sweep's whole time limit
    MctsParams params; // the search's defaults
    try {
        if (!opt["--shape"].empty())
            shapeOverrides = parseShape(opt["--shape"]);
        if (lessons && opt["--lessons-at"] != "default")
            lessonOverrides = parseShape(opt["--lessons-at"]);
        if (!opt["--max-points"].empty())
            maxPoints = size_t(wholeNumber(opt, "--max-points", 0, 1, 1 << 20));
        seeds = wholeNumber(opt, "--seeds", 0, 1, 10000);
        confirmations = wholeNumber(opt, "--confirm", 0, 0, 100);
        const std::string rank = opt["--rank"].empty() ? (ranksByCandidateTime(backend) ? "time" : "ratio") : opt["--rank"];
        if (rank != "time" && rank != "ratio")
            throw Error("option --rank takes time or ratio, not '" + rank + "'");
        rankByCandidateTime = rank == "time";
        po.workers = wholeNumber(opt, "--workers", 0, 1, 64);
        eo.benchSamples = wholeNumber(opt, "--samples", 0, 1, 100000);
    } catch (const Error &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    if (const std::string x = opt["--exploration"]; !x.empty()) {
        char *end = nullptr;
        params.exploration = std::strtod(x.c_str(), &end);
        if (*end != '\0' || !(params.exploration >= 0)) {
            std::fprintf(stderr, "option --exploration takes a number of at least 0, not '%s'\n", x.c_str());
            return 2;
        }
    }
    WorkerPool pool(po);
    params.bestBackup = opt["--best-backup"] == "1";
    nlohmann::json cache = nlohmann::json::object();
    // A cache that is not there starts empty; one that does not read is refused, never replaced: it
    // may hold hours of measurements.
    if (const std::string file = opt["--cache"]; !file.empty() && access(file.c_str(), F_OK) == 0) {
        cache = nlohmann::json::parse(readWholeFile(file), nullptr, false);
        if (!cache.is_object()) {
            std::fprintf(stderr, "the cache %s is not a JSON object of earlier sweeps: give another --cache, or mend or move this one\n",
                         file.c_str());
            return 2;
        }
    }

    std::set<std::string> wanted;
    for (const auto &w : split(opt["--families"]))
        wanted.insert(w);
    std::set<std::string> families;
    for (const auto &fam : cardFamilies())
        if ((wanted.empty() || wanted.count(fam)) && !TemplateLibrary::builtin().forFamily(fam, backend).empty())
            families.insert(fam);
    std::printf("| family | templates | points swept | values per parameter | failed | best (speedup) | points within 3%% | "
                "20%% of the points (evals) | evals to within 3%% (median, worst of %d seeds) | fraction (median, worst) | "
                "random order (expected evals, fraction) | within 20%% | within ceil(20%%), at least 1 | first proposal / best | "
                "best in ceil(20%%) / best (worst seed) |%s\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|%s\n", seeds,
                lessons ? " lesson from the other shape | its point here / best | evals to within 3% from the lesson (median, worst) | "
                          "from the lesson within ceil(20%), at least 1 |" : "",
                lessons ? "---|---|---|---|" : "");
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    int families_met = 0, families_met_ceil = 0, families_run = 0, evaluations = 0, confirmed = 0, sumMedian = 0, sumWorst = 0;
    double sumRandom = 0;
    std::vector<double> atBudget; // per family: the worst seed's best in ceil(20%) evaluations over the sweep's best
    int lessonsRun = 0, lessonsMetCeil = 0, lessonsSumMedian = 0, lessonsSumWorst = 0, lessonsPlainMedian = 0;
    for (const auto &fam : families) {
        auto prepared = prepare(fam, backend, shapeOverrides, maxPoints, pool, eo, cache, confirmations);
        if (!prepared)
            continue;
        Family &f = *prepared;
        std::optional<Family> other;
        if (lessons)
            other = prepare(fam, backend, lessonOverrides, maxPoints, pool, eo, cache, confirmations);
        const auto templates = TemplateLibrary::builtin().forFamily(fam, backend);
        if (!opt["--cache"].empty()) {
            try {
                writeFileAtomically(opt["--cache"], cache.dump(1)); // whole or not at all: a kill here loses nothing
            } catch (const Error &e) {
                std::fprintf(stderr, "%s (the cache on disk is as it was before this family)\n", e.what());
                return 1;
            }
        }
        evaluations += int(f.runs.size());
        for (const auto &[k, r] : f.runs)
            confirmed += int(r.size()) - 1;
        if (f.bestSpeedup <= 0) {
            std::printf("| %s | %zu | %zu | %s | %d | none correct | - | - | - | - | - | - | - | - | - |%s\n", f.name.c_str(), templates.size(),
                        f.runs.size(), f.valuesKept ? std::to_string(f.valuesKept).c_str() : "all", f.failed, lessons ? " - | - | - | - |" : "");
            std::fflush(stdout);
            continue;
        }
        std::vector<int> needed;
        std::vector<double> firsts;
        double atBudgetWorst = 1;
        for (int sd = 1; sd <= seeds; ++sd) {
            const auto r = replay(f, backend, uint64_t(sd), params, first);
            needed.push_back(r.needed);
            firsts.push_back(r.first);
            atBudgetWorst = std::min(atBudgetWorst, r.atBudget);
        }
        atBudget.push_back(atBudgetWorst);
        std::sort(needed.begin(), needed.end());
        std::sort(firsts.begin(), firsts.end());
        const int median = needed[needed.size() / 2], worst = needed.back();
        const double n = double(f.runs.size());
        const bool met = worst <= 0.2 * n + 1e-9;
        const bool metCeil = worst <= std::max(1.0, std::ceil(0.2 * n - 1e-9)); // at least one evaluation
        int near = 0; // points within 3% of the best: a random order needs (n + 1) / (near + 1) on average
        for (const auto &[k, sp] : f.value)
            near += sp > 0 && sp * kWithin >= f.bestSpeedup;
        const double randomEvals = (n + 1) / (near + 1);
        char budget[48], firstText[32];
        std::snprintf(budget, sizeof budget, "%.1f%s", 0.2 * n, 0.2 * n < 1 ? " (under one)" : "");
        const double firstRatio = firsts[firsts.size() / 2]; // the median seed's
        std::snprintf(firstText, sizeof firstText, "%.2f", firstRatio);
        families_met += met;
        families_met_ceil += metCeil;
        ++families_run;
        sumMedian += median;
        sumWorst += worst;
        sumRandom += randomEvals;
        // The same replays, each started from the lesson of the other shape.
        std::string lessonColumns;
        if (lessons) {
            const auto lesson = other ? bestAsLesson(*other) : std::nullopt;
            if (!lesson) {
                lessonColumns = " none correct there | - | - | - |";
            } else {
                std::vector<int> fromLesson;
                std::vector<double> lessonFirst;
                for (int sd = 1; sd <= seeds; ++sd) {
                    const auto r = replay(f, backend, uint64_t(sd), params, first, lesson);
                    fromLesson.push_back(r.needed);
                    lessonFirst.push_back(r.first);
                }
                std::sort(fromLesson.begin(), fromLesson.end());
                std::sort(lessonFirst.begin(), lessonFirst.end());
                const int lm = fromLesson[fromLesson.size() / 2], lw = fromLesson.back();
                const bool lmet = lw <= std::max(1.0, std::ceil(0.2 * n - 1e-9));
                ++lessonsRun;
                lessonsMetCeil += lmet;
                lessonsSumMedian += lm;
                lessonsSumWorst += lw;
                lessonsPlainMedian += median;
                char buf[512], ratio[32] = "failed";
                const double lf = lessonFirst[lessonFirst.size() / 2];
                if (lf > 0)
                    std::snprintf(ratio, sizeof ratio, "%.2f", lf);
                std::snprintf(buf, sizeof buf, " %s%s (%.3fx there) | %s | %d, %d | %s |", lesson->templateId.c_str(), lesson->point.dump().c_str(),
                              other->bestSpeedup, ratio, lm, lw, lmet ? "yes" : "no");
                lessonColumns = buf;
            }
        }
        std::printf("| %s | %zu | %zu | %s | %d | %s (%.3fx) | %d | %s | %d, %d | %.0f%%, %.0f%% | %.1f, %.0f%% | %s | %s | %s | %.3f |%s\n",
                    f.name.c_str(), templates.size(), f.runs.size(), f.valuesKept ? std::to_string(f.valuesKept).c_str() : "all", f.failed,
                    f.best.c_str(), f.bestSpeedup, near, budget, median, worst, 100.0 * median / n, 100.0 * worst / n, randomEvals,
                    100.0 * randomEvals / n, met ? "yes" : "no", metCeil ? "yes" : "no", firstRatio > 0 ? firstText : "failed",
                    atBudgetWorst, lessonColumns.c_str());
        std::fflush(stdout);
    }
    pool.shutdown();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("\n%d of %d families within 3%% of the sweep's best after at most 20%% of the evaluations (worst seed); "
                "%d of %d after at most ceil(20%%), at least one evaluation; evaluations to within 3%% summed over the families: "
                "%d (median seeds), %d (worst seeds), %.1f expected of a random order; first proposals: %s; %d evaluations swept and %d confirmations (cached ones included) in %.0f s\n",
                families_met, families_run, families_met_ceil, families_run, sumMedian, sumWorst, sumRandom, first.c_str(), evaluations, confirmed, seconds);
    if (!atBudget.empty()) {
        std::sort(atBudget.begin(), atBudget.end());
        // Families whose worst seed's best is within the factor `within` of the sweep's best.
        const auto at = [&](double within) { return int(std::count_if(atBudget.begin(), atBudget.end(), [within](double a) { return a * within >= 1.0; })); };
        std::printf("In ceil(20%%) evaluations (worst seed), the best found was within 3%% of the sweep's best in %d of %zu families, "
                    "within 10%% in %d, within 20%% in %d; the lowest %.3f, the median %.3f\n",
                    at(kWithin), atBudget.size(), at(1.10), at(1.20), atBudget.front(), atBudget[atBudget.size() / 2]);
    }
    if (lessons)
        std::printf("From a lesson of the other shape (%s): %d of %d families within 3%% after at most ceil(20%%), at least one evaluation "
                    "(worst seed); evaluations to within 3%% summed: %d (median seeds), %d (worst seeds), against %d (median seeds) "
                    "without the lesson over the same families\n",
                    opt["--lessons-at"].c_str(), lessonsMetCeil, lessonsRun, lessonsSumMedian, lessonsSumWorst, lessonsPlainMedian);
    if (familiesNotSwept)
        std::printf("%d families not replayed: points missing from the cache could not be measured (see stderr)\n", familiesNotSwept);
    return familiesNotSwept ? 1 : 0;
}
