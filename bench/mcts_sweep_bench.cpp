// MCTS against an exhaustive sweep, per template family. For each family's card (a stated small shape),
// every valid point of every template of the backend is evaluated on this device through the real
// worker (where a space is too large, each parameter's values are cut to V evenly spaced ones, the
// first and last included, until at most --max-points valid points remain: that subset is then the
// space, for the sweep and the search alike). Then the search's policy (MctsTree's selection, widening
// and pruning, the template proposer, the reward the engine gives) runs with several seeds, each
// evaluation looked up in the sweep, and we count the evaluations it needed to come within 3% of the
// sweep's best speedup. Prints a Markdown table: the fraction of the space each search evaluated, read
// two ways: at most 20% of the points, and at most ceil(20%) of them, at least one evaluation (a space
// of 4 points passes when the first evaluation is within 3%).
//
// --first spread replays another choice of the baseline's children after the templates' seeds: the
// valid point farthest from those tried (each parameter's values by index, normalised), instead of a
// random one; --first centre also starts a template that has no seed at the middle of its values.
// Neither asks anything of the measured values, so neither can be fitted to them.
//
//   kforge-mcts-sweep-bench [--backend cpu|cuda] [--families a,b] [--max-points N] [--seeds N]
//                           [--samples N] [--workers N] [--worker CMD] [--first seeds|spread|centre]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pool/worker_pool.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "search/mcts.h"
#include "util/error.h"

using namespace kforge;

namespace {

constexpr double kWithin = 1.03; // "within 3% of the sweep's best"

// A small shape per family, where the sweep stays short but the kernels still differ.
ShapeBindings benchShape(const std::string &family, const std::string &backend)
{
    const bool gpu = backend == "cuda";
    if (family == "group_norm")
        return {{"n", 4}, {"c", 64}, {"hw", gpu ? 4096 : 256}, {"groups", 8}};
    if (family == "instance_norm")
        return {{"n", 4}, {"c", 16}, {"hw", gpu ? 4096 : 256}};
    if (family == "cross_entropy")
        return {{"rows", gpu ? 256 : 32}, {"vocab", gpu ? 32000 : 2048}};
    if (family == "scaled_masked_softmax") // the mask has mrows rows, broadcast over the rows
        return {{"rows", gpu ? 4096 : 128}, {"cols", gpu ? 4096 : 512}, {"mrows", gpu ? 64 : 16}};
    if (dimFamily(family))
        return {{"outer", 8}, {"dim", gpu ? 300 : 64}, {"inner", gpu ? 1000 : 128}};
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
    std::string name;
    OperatorCard card;
    TemplateLibrary lib; // the family's templates, their spaces cut to the swept subset
    size_t valuesKept = 0; // V, 0: the whole space
    std::map<std::string, double> speedup; // template + point -> measured speedup, 0 when not correct
    std::string best;
    double bestSpeedup = 0;
    int failed = 0;
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

// Evaluates every point of the family's (cut) space, keeping the pool busy; a family already in
// `cache` (a JSON file of earlier sweeps on this machine, --cache) is read from it instead.
void sweep(Family &f, WorkerPool &pool, const std::string &backend, const EvalOptions &eo, nlohmann::json &cache)
{
    if (cache.contains(f.name)) {
        for (const auto &[k, v] : cache[f.name].items())
            f.speedup[k] = v.get<double>();
        for (const auto &[k, s] : f.speedup) {
            f.failed += s <= 0;
            if (s > f.bestSpeedup) {
                f.bestSpeedup = s;
                f.best = k;
            }
        }
        return;
    }
    TemplateProposer renderer(backend, f.lib);
    std::vector<std::pair<std::string, Candidate>> work;
    for (const auto *t : f.lib.forFamily(f.card.family, backend))
        for (const auto &p : validPoints(*t, f.card))
            work.push_back({key(t->id, p), renderer.render(*t, p, f.card).candidate});
    std::mutex m;
    std::condition_variable cv;
    size_t next = 0, done = 0;
    int inFlight = 0;
    const int depth = pool.size() + pool.lookahead(backend);
    std::unique_lock lock(m);
    while (done < work.size()) {
        while (next < work.size() && inFlight < depth) {
            const size_t i = next++;
            ++inFlight;
            lock.unlock();
            pool.submit(f.card, work[i].second, eo, [&, i](Verdict v) {
                std::lock_guard g(m);
                f.speedup[work[i].first] = v.correct() ? v.speedup : 0.0;
                f.failed += !v.correct();
                --inFlight;
                ++done;
                cv.notify_all();
            });
            lock.lock();
        }
        cv.wait(lock, [&] { return inFlight < depth || done == work.size(); });
    }
    for (const auto &[k, s] : f.speedup)
        if (s > f.bestSpeedup) {
            f.bestSpeedup = s;
            f.best = k;
        }
    cache[f.name] = f.speedup;
}

// The template proposer, except that the baseline's children after the seeds are the unseen valid
// point farthest from the points tried (in index space, each parameter normalised to [0, 1]; the
// template with the fewest tries first), ties broken by the seed: a space-filling start that reads
// nothing of the measurements. With `centre`, a template without a seed starts at the valid point
// nearest the middle of each parameter's values instead of a random one. Children of other nodes are
// the template proposer's.
class SpreadProposer : public Proposer {
public:
    SpreadProposer(std::string backend, const TemplateLibrary &lib, bool centre)
        : m_backend(std::move(backend)), m_lib(lib), m_inner(m_backend, lib), m_centre(centre)
    {
    }
    std::string name() const override { return "spread"; }
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
                if (m_centre && m_tried[t->id].empty()) // no seed: the middle of each parameter's values first
                    d -= distance(*t, p, centre(*t));
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
    static nlohmann::json centre(const KernelTemplate &t)
    {
        nlohmann::json c = nlohmann::json::object();
        for (const auto &[name, values] : t.space)
            c[name] = values[(values.size() - 1) / 2];
        return c;
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
        m_inner.known(n); // so its own moves do not propose this point again
        Proposal prop = m_inner.render(t, p, card);
        prop.rationale = why;
        return prop;
    }

    std::string m_backend;
    const TemplateLibrary &m_lib;
    TemplateProposer m_inner;
    bool m_centre;
    std::map<std::string, std::vector<nlohmann::json>> m_tried;
};

// The search's policy replayed against the sweep: the evaluations until one within 3% of the best
// (the number of points when it never gets there).
int replay(const Family &f, const std::string &backend, uint64_t seed, const MctsParams &params, const std::string &first)
{
    TemplateProposer templates(backend, f.lib);
    SpreadProposer spreading(backend, f.lib, first == "centre");
    Proposer &proposer = first == "seeds" ? static_cast<Proposer &>(templates) : spreading;
    std::mt19937_64 rng(seed);
    MctsTree tree;
    std::vector<NodeRecord> records(1);
    const int total = int(f.speedup.size());
    for (int evaluated = 0; evaluated < total;) {
        const auto sel = tree.select(params);
        if (!sel)
            return total;
        const NodeRecord *parent = *sel == 0 ? nullptr : &records[size_t(*sel)];
        auto proposal = proposer.propose(f.card, parent, rng);
        if (!proposal) {
            tree.markExhausted(*sel);
            continue;
        }
        const auto it = f.speedup.find(key(proposal->templateId, proposal->params));
        if (it == f.speedup.end())
            throw Error("the proposer left the swept space: " + key(proposal->templateId, proposal->params));
        ++evaluated;
        const int t = tree.addChild(*sel);
        NodeRecord rec;
        rec.templateId = proposal->templateId;
        rec.params = proposal->params;
        rec.speedup = it->second;
        records.push_back(rec);
        const bool correct = it->second > 0;
        tree.complete(t, rewardFor(correct, it->second), !correct);
        tree.prune(params);
        if (correct && it->second * kWithin >= f.bestSpeedup)
            return evaluated;
    }
    return total;
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

} // namespace

int main(int argc, char **argv)
{
    std::map<std::string, std::string> opt = {{"--backend", "cpu"}, {"--max-points", ""}, {"--seeds", "10"}, {"--samples", "10"},
                                              {"--workers", "1"}, {"--worker", ""}, {"--families", ""}, {"--cache", ""},
                                              {"--exploration", ""}, {"--best-backup", ""}, {"--first", "seeds"}};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (!opt.count(a) || i + 1 >= argc) {
            std::fprintf(stderr, "usage: %s [--backend cpu|cuda] [--families a,b] [--max-points N] [--seeds N] [--samples N] "
                                 "[--workers N] [--worker CMD] [--cache FILE] [--exploration C] [--best-backup 1] [--first seeds|spread|centre]\n", argv[0]);
            return 2;
        }
        opt[a] = argv[++i];
    }
    const std::string first = opt["--first"];
    if (first != "seeds" && first != "spread" && first != "centre") {
        std::fprintf(stderr, "--first takes seeds, spread or centre, not '%s'\n", first.c_str());
        return 2;
    }
    const std::string backend = opt["--backend"];
    const size_t maxPoints = opt["--max-points"].empty() ? (backend == "cuda" ? 12 : 100) : std::stoul(opt["--max-points"]);
    const int seeds = std::stoi(opt["--seeds"]);
    PoolOptions po;
    po.command = !opt["--worker"].empty() ? opt["--worker"] : std::string("'") + KFORGE_WORKER_PATH + "'";
    po.workers = std::stoi(opt["--workers"]);
    WorkerPool pool(po);
    pool.start();
    EvalOptions eo;
    eo.benchSamples = std::stoi(opt["--samples"]);
    eo.warmup = 2;
    MctsParams params; // the search's defaults
    if (!opt["--exploration"].empty())
        params.exploration = std::stod(opt["--exploration"]);
    params.bestBackup = opt["--best-backup"] == "1";
    nlohmann::json cache = nlohmann::json::object();
    if (!opt["--cache"].empty()) {
        std::ifstream in(opt["--cache"]);
        if (in)
            cache = nlohmann::json::parse(in, nullptr, false);
        if (!cache.is_object())
            cache = nlohmann::json::object();
    }

    std::set<std::string> wanted;
    for (const auto &w : split(opt["--families"]))
        wanted.insert(w);
    std::set<std::string> families;
    for (const auto &fam : cardFamilies())
        if ((wanted.empty() || wanted.count(fam)) && !TemplateLibrary::builtin().forFamily(fam, backend).empty())
            families.insert(fam);
    std::printf("| family | templates | points swept | values per parameter | failed | best (speedup) | points within 3%% | "
                "evals to within 3%% (median, worst of %d seeds) | fraction (median, worst) | random order (expected) | "
                "within 20%% | within ceil(20%%), at least 1 | first seed / best |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n", seeds);
    std::fflush(stdout);
    const auto t0 = std::chrono::steady_clock::now();
    int families_met = 0, families_met_ceil = 0, families_run = 0, evaluations = 0;
    for (const auto &fam : families) {
        Family f;
        f.name = fam;
        try {
            f.card = makeCard(fam, benchShape(fam, backend));
        } catch (const std::exception &e) {
            std::fprintf(stderr, "%s: no card at the bench shape: %s\n", fam.c_str(), e.what());
            continue;
        }
        const auto templates = TemplateLibrary::builtin().forFamily(fam, backend);
        chooseSpace(f, templates, maxPoints);
        sweep(f, pool, backend, eo, cache);
        if (!opt["--cache"].empty())
            std::ofstream(opt["--cache"]) << cache.dump(1);
        evaluations += int(f.speedup.size());
        if (f.bestSpeedup <= 0) {
            std::printf("| %s | %zu | %zu | %s | %d | none correct | - | - | - | - | - | - | - |\n", fam.c_str(), templates.size(), f.speedup.size(),
                        f.valuesKept ? std::to_string(f.valuesKept).c_str() : "all", f.failed);
            std::fflush(stdout);
            continue;
        }
        std::vector<int> needed;
        for (int s = 1; s <= seeds; ++s)
            needed.push_back(replay(f, backend, uint64_t(s), params, first));
        std::sort(needed.begin(), needed.end());
        const int median = needed[needed.size() / 2], worst = needed.back();
        const double n = double(f.speedup.size());
        const bool met = worst <= 0.2 * n + 1e-9;
        const bool metCeil = worst <= std::max(1.0, std::ceil(0.2 * n - 1e-9)); // at least one evaluation
        int near = 0; // points within 3% of the best: a random order needs (n + 1) / (near + 1) on average
        for (const auto &[k, sp] : f.speedup)
            near += sp > 0 && sp * kWithin >= f.bestSpeedup;
        // The first template's seed, the search's first evaluation: what a space of under 10 points hangs on.
        std::string first = "no seed";
        for (const auto *t : f.lib.forFamily(fam, backend))
            if (t->seed) {
                const auto sp = f.speedup.find(key(t->id, t->seed(f.card)));
                char buf[64];
                std::snprintf(buf, sizeof buf, "%.2f", sp == f.speedup.end() ? -1.0 : sp->second / f.bestSpeedup);
                first = sp == f.speedup.end() ? "not swept" : buf;
                break;
            }
        families_met += met;
        families_met_ceil += metCeil;
        ++families_run;
        std::printf("| %s | %zu | %zu | %s | %d | %s (%.3fx) | %d | %d, %d | %.0f%%, %.0f%% | %.0f%% | %s | %s | %s |\n", fam.c_str(),
                    templates.size(), f.speedup.size(), f.valuesKept ? std::to_string(f.valuesKept).c_str() : "all", f.failed,
                    f.best.c_str(), f.bestSpeedup, near, median, worst, 100.0 * median / n, 100.0 * worst / n,
                    100.0 * (n + 1) / (near + 1) / n, met ? "yes" : "no", metCeil ? "yes" : "no", first.c_str());
        std::fflush(stdout);
    }
    pool.shutdown();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("\n%d of %d families within 3%% of the sweep's best after at most 20%% of the evaluations (worst seed); "
                "%d of %d after at most ceil(20%%), at least one evaluation; first proposals: %s; %d evaluations swept in %.0f s\n",
                families_met, families_run, families_met_ceil, families_run, first.c_str(), evaluations, seconds);
    return 0;
}
