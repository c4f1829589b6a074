#include "app/cli/commands.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <unistd.h>

#include "knowledge/knowledge_base.h"
#include "knowledge/lessons.h"
#include "llm/client.h"
#include "ops/launch_comment.h"
#include "ops/scan_ops.h"
#include "ops/shape_box.h"
#include "ops/workload.h"
#include "pool/worker_pool.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "proposers/proposer_factory.h"
#include "search/search_engine.h"
#include "workload/workload_file.h"
#include "search/campaign.h"
#include "search/campaign_inputs.h"
#include "search/resume.h"
#include "store/session_store.h"
#include "util/error.h"
#include "util/paths.h"

namespace kforge::cli {

namespace {

constexpr int64_t kMaxExtent = 2147483647; // a shape symbol
constexpr int64_t kMaxDeadlineMs = 86400000; // a day
constexpr int kMaxWorkers = 256;

std::string joined(const std::vector<std::string> &words, const char *last = " or ")
{
    std::string s;
    for (size_t i = 0; i < words.size(); ++i)
        s += (i == 0 ? "" : i + 1 == words.size() ? last : ", ") + words[i];
    return s;
}

// The one integer parser of the CLI: all of `text` must be a whole number within [min, max].
int64_t parseInteger(const std::string &option, const std::string &text, int64_t min, int64_t max, const std::string &alsoAccepted = {})
{
    int64_t v = 0;
    const char *b = text.data(), *e = b + text.size();
    const auto [p, ec] = std::from_chars(b, e, v);
    if (ec == std::errc() && p == e && v >= min && v <= max)
        return v;
    const std::string range = max == std::numeric_limits<int64_t>::max() ? "of at least " + std::to_string(min)
                                                                         : "from " + std::to_string(min) + " to " + std::to_string(max);
    throw Error("option " + option + " takes " + (alsoAccepted.empty() ? "" : alsoAccepted + " or ") + "a whole number " + range + ", not '"
                + text + "'");
}

// --name value options and bare flags; anything unknown, repeated or empty is an error naming the option.
class Options {
public:
    Options(const Args &args, const std::map<std::string, bool> &known) // name -> takes a value
    {
        for (size_t i = 0; i < args.size(); ++i) {
            const auto &a = args[i];
            auto it = known.find(a);
            if (it == known.end())
                throw Error("unknown option '" + a + "' (see --help)");
            if (m_values.count(a))
                throw Error("option " + a + " is given twice");
            if (it->second) {
                if (i + 1 >= args.size())
                    throw Error("option " + a + " needs a value");
                const auto &v = args[++i];
                if (v.empty())
                    throw Error("option " + a + " needs a value, not an empty string");
                if (known.count(v))
                    throw Error("option " + a + " needs a value before " + v);
                m_values[a] = v;
            } else {
                m_values[a] = "1";
            }
        }
    }
    bool has(const std::string &k) const { return m_values.count(k) != 0; }
    std::string get(const std::string &k, const std::string &def = "") const
    {
        auto it = m_values.find(k);
        return it == m_values.end() ? def : it->second;
    }
    int64_t integer(const std::string &k, int64_t def, int64_t min, int64_t max) const
    {
        return has(k) ? parseInteger(k, get(k), min, max) : def;
    }
    int count(const std::string &k, int def, int min, int max) const { return int(integer(k, def, min, max)); }
    double real(const std::string &k, double def, double min, double max) const
    {
        if (!has(k))
            return def;
        const auto text = get(k);
        char *end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v) || v < min || v > max)
            throw Error("option " + k + " takes a number from " + std::to_string(int64_t(min)) + " to " + std::to_string(int64_t(max))
                        + ", not '" + text + "'");
        return v;
    }
    // One of `allowed`, or `def` when the option is absent.
    std::string choice(const std::string &k, const std::string &def, const std::vector<std::string> &allowed) const
    {
        if (!has(k))
            return def;
        const auto v = get(k);
        if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
            throw Error("option " + k + " takes " + joined(allowed) + ", not '" + v + "'");
        return v;
    }

private:
    std::map<std::string, std::string> m_values;
};

const std::vector<std::string> kBackends = {"cpu", "cuda"};
const std::vector<std::string> kDtypes = {"float32", "float16", "bfloat16"};

std::string readFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error("cannot read '" + path + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

OperatorCard demoCard(const Options &o)
{
    for (const char *k : {"--shape", "--dtype"})
        if (o.has(k) && !o.has("--family"))
            throw Error(std::string("option ") + k + " describes a card of one family: pass --family F with it (" + joined(cardFamilies())
                        + ")");
    const int64_t rows = o.integer("--rows", 256, 1, kMaxExtent), cols = o.integer("--cols", 1024, 1, kMaxExtent);
    if (o.has("--family")) {
        const auto family = o.choice("--family", "", cardFamilies());
        if (o.has("--op"))
            throw Error("option --op picks an operator of the demo workload; with --family the card is that family's");
        ShapeBindings shape = o.has("--shape") ? parseShape(o.get("--shape")) : ShapeBindings{{"rows", rows}, {"cols", cols}};
        auto card = makeCard(family, shape, dtypeFromName(o.choice("--dtype", "float32", kDtypes)));
        for (const auto &[sym, extent] : shape)
            if (!card.shape.count(sym))
                throw Error("option --shape: a " + family + " card's shape has the symbols " + shapeText(card.shape, ", ") + "; '" + sym
                            + "' is not one of them");
        return card;
    }
    auto w = demoWorkload(rows, cols);
    const auto key = o.get("--op", w.operators.front().key);
    std::vector<std::string> keys;
    for (const auto &c : w.operators) {
        if (c.key == key)
            return c;
        keys.push_back(c.key);
    }
    throw Error("option --op takes an operator of the demo workload (" + joined(keys) + "), not '" + key + "'");
}

// --card FILE (an operator card as JSON, as `kforge-cli card` prints one or a workload file holds them),
// else the demo workload's operator or a family card from --family/--shape/--dtype.
OperatorCard chosenCard(const Options &o)
{
    if (!o.has("--card"))
        return demoCard(o);
    for (const char *k : {"--family", "--shape", "--dtype", "--rows", "--cols", "--op"})
        if (o.has(k))
            throw Error(std::string("options --card and ") + k + " both describe the card: pass one of them");
    try {
        return nlohmann::json::parse(readFile(o.get("--card"))).get<OperatorCard>();
    } catch (const nlohmann::json::exception &e) {
        throw Error("the card '" + o.get("--card") + "' is not valid JSON: " + e.what());
    }
}

SearchEngine *g_engine = nullptr;
std::atomic<int> g_interrupts{0}; // lock-free, so a signal handler may touch it
std::atomic<bool> g_stopSignal{false}; // any stop signal, also one between two operators of a campaign

// Ctrl-C: no new candidates, the ones in flight finish. A second Ctrl-C, or SIGTERM: stop now, the
// nodes in flight marked interrupted for `search --resume`. Only flags and write(2) here.
void onStopSignal(int sig)
{
    g_stopSignal = true;
    const bool now = sig == SIGTERM || ++g_interrupts > 1;
    if (g_engine)
        g_engine->requestStopFromSignal(now);
    static const char soon[] = "\nkforge-cli: stopping after the evaluations in flight (Ctrl-C again to stop now)\n";
    static const char at_once[] = "\nkforge-cli: stopping now; nodes in flight are marked interrupted (search --resume evaluates them again)\n";
    if (now)
        (void)!::write(2, at_once, sizeof at_once - 1);
    else
        (void)!::write(2, soon, sizeof soon - 1);
}

class PrintingObserver : public SearchObserver {
public:
    void nodeFinished(const NodeRecord &n) override
    {
        std::printf("node %-4lld %-24s %-12s %s\n", (long long)n.id, n.templateId.c_str(), n.status.c_str(), n.summary.c_str());
        std::fflush(stdout);
    }
    void workerEvent(const PoolEvent &e) override
    {
        std::printf("worker %d %s: %s\n", e.slot, e.kind.c_str(), e.detail.c_str());
        std::fflush(stdout);
    }
};

// A campaign's operators searched in turn in one session, each to its step's nodes (a resumed step's
// stored nodes count: only what is left is spent, its unfinished nodes evaluated again). A stop, a signal
// included, ends it between two operators too. Returns the best accepted speedup per operator searched
// (1 where none was accepted) and whether it was stopped.
struct StepsRun {
    std::vector<std::pair<std::string, double>> best;
    bool stopped = false, interrupted = false;
};

StepsRun runSteps(SessionStore &store, WorkerPool &pool, Proposer &proposer, SearchOptions so, int64_t sessionId,
                  const std::vector<ResumeStep> &steps)
{
    StepsRun run;
    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    for (const auto &step : steps) {
        if (step.nodes == 0)
            continue;
        if (g_stopSignal) {
            run.stopped = true;
            run.interrupted = run.interrupted || g_interrupts > 1;
            break;
        }
        if (step.done()) {
            std::printf("== %s: done before (%d of %d nodes)\n", step.op.card.key.c_str(), step.made, step.nodes);
            continue;
        }
        so.maxNodes = step.nodes;
        SearchEngine engine(store, pool, proposer, so);
        g_engine = &engine;
        if (step.made > 0)
            std::printf("== %s: %d nodes, %d made before (%d of them evaluated again)\n", step.op.card.key.c_str(), step.nodes, step.made,
                        step.unfinished);
        else
            std::printf("== %s: %d nodes\n", step.op.card.key.c_str(), step.nodes);
        std::fflush(stdout);
        PrintingObserver obs;
        const auto prog = engine.run(sessionId, step.op.id, step.op.card, &obs);
        g_engine = nullptr;
        std::printf("   %s: best %.3fx (node %lld)\n", prog.stopReason.c_str(), prog.bestSpeedup, (long long)prog.bestNode);
        // Only what the guard accepted counts toward the workload.
        double accepted = 1.0;
        for (const auto &n : store.nodes(sessionId))
            if (n.operatorId == step.op.id && n.status == "accepted")
                accepted = std::max(accepted, n.speedup);
        run.best.push_back({step.op.card.key, accepted});
        run.interrupted = run.interrupted || prog.stopReason == "interrupted";
        if (prog.stopReason == "interrupted" || prog.stopReason == "stopped" || g_stopSignal) {
            run.stopped = true;
            break;
        }
    }
    if (run.interrupted)
        pool.abort();
    else
        pool.shutdown();
    store.setSessionStatus(sessionId, run.stopped ? "stopped" : "finished");
    store.checkpoint();
    return run;
}

} // namespace

int searchCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--session", true}, {"--nodes", true}, {"--seconds", true},
                           {"--stall", true}, {"--workers", true}, {"--seed", true}, {"--worker", true},
                           {"--rows", true}, {"--cols", true}, {"--op", true}, {"--samples", true}, {"--deadline-ms", true},
                           {"--family", true}, {"--shape", true}, {"--dtype", true}, {"--backend", true},
                           {"--proposer", true}, {"--base-url", true}, {"--budget-usd", true}, {"--no-lessons", false},
                           {"--resume", false}, {"--card", true}, {"--exploration", true}, {"--widen-k", true},
                           {"--widen-alpha", true}, {"--max-repairs", true}, {"--prune-margin", true}, {"--prune-min-visits", true},
                           {"--roots", true}, {"--best-backup", false}, {"--compile-ahead", true}});
    if (o.has("--help")) {
        std::puts("usage: kforge-cli search [options]\n\n"
                  "Searches kernels for an operator of the built-in demo workload with the offline template\n"
                  "generator and writes every attempt to a session file that the GUI opens.\n\n"
                  "  --session FILE     session file to write (default kforge-session.kforge)\n"
                  "  --resume           go on with the last search in --session where it stopped (a stop, Ctrl-C or a\n"
                  "                     kill): its operator, backend, proposer and options; nodes left in flight are\n"
                  "                     evaluated again; --nodes is then the total for the operator. A campaign\n"
                  "                     (kforge-cli campaign, or the window's) goes on with every operator of its plan\n"
                  "                     that has nodes left, each to its share\n"
                  "  --nodes N          candidates to evaluate (default 24)\n"
                  "  --seconds S        wall-time budget (default: none)\n"
                  "  --stall N          stop after N results without a new best (default: never)\n"
                  "  --workers N|auto   worker processes (default 1; auto: one per local GPU for --backend cuda)\n"
                  "  --worker CMD       command line that starts a worker (default: kforge-worker beside this program;\n"
                  "                     e.g. 'ssh gpu7 kforge-worker' or 'srun --gres=gpu:1 kforge-worker')\n"
                  "  --compile-ahead K  queued candidates a worker that compiles ahead (cuda) is told of, to compile\n"
                  "                     while the device times the one before (default 3; 0: none)\n"
                  "  --rows R --cols C  demo softmax shape (default 256 x 1024)\n"
                  "  --op KEY           operator of the workload (default: its first)\n"
                  "  --family F         search a single operator of family F instead of the demo workload\n"
                  "                     (see 'kforge-cli templates'); with --shape and --dtype\n"
                  "  --shape S          shape bindings, e.g. rows=4096,cols=4096 or n=64,c=128,hw=16384,groups=32\n"
                  "  --card FILE        search this operator card (JSON as 'kforge-cli card' prints, or one of a\n"
                  "                     profiled workload's cards): any ATen operator, for the llm proposer\n"
                  "  --dtype D          float32 (default), float16 or bfloat16\n"
                  "  --backend B        cpu (default) or cuda\n"
                  "  --samples N        timed runs per side (default 30)\n"
                  "  --deadline-ms MS   per-evaluation deadline (default 60000)\n"
                  "  --seed N           search seed (default 1)\n"
                  "  --exploration C    UCT's exploration constant (default 0.7)\n"
                  "  --widen-k K --widen-alpha A  progressive widening: a node may have floor(K * (visits+1)^A)\n"
                  "                     children (default 2 and 0.5)\n"
                  "  --max-repairs N    children of a failed node, each a repair (default 2)\n"
                  "  --prune-margin M --prune-min-visits V  a subtree whose every leaf failed or had nothing more\n"
                  "                     to offer, after V evaluations, with a best reward M below a sibling's is no longer\n"
                  "                     selected (rewards are log speedups; default 1 and 3; margin 0: never)\n"
                  "  --best-backup      UCT ranks a subtree by its best reward rather than its mean (a search for\n"
                  "                     the single fastest kernel; kept for --resume)\n"
                  "  --roots N          the baseline's first N children are made before UCT descends, so each\n"
                  "                     template's first try gets its turn (default: off)\n"
                  "  --proposer P       templates (default, offline) or llm:PROVIDER/MODEL, e.g. llm:anthropic/claude-sonnet-4-5,\n"
                  "                     llm:openai/gpt-4.1, llm:gemini/gemini-2.5-pro, llm:openrouter/deepseek/deepseek-chat,\n"
                  "                     llm:vllm/MODEL, llm:ollama/MODEL; the key comes from OPENAI_API_KEY, ANTHROPIC_API_KEY,\n"
                  "                     GEMINI_API_KEY or OPENROUTER_API_KEY\n"
                  "  --base-url URL     the provider's endpoint (an OpenAI-compatible server: http://host:8000/v1)\n"
                  "  --budget-usd X     stop when the LLM calls have cost X (prices: resources/llm/prices.json,\n"
                  "                     overridden by ~/.config/kforge/prices.json)\n"
                  "  --no-lessons       neither start from the lesson of an earlier search of this operator on this\n"
                  "                     device nor write this search's winner as one (the knowledge folder:\n"
                  "                     $KFORGE_KNOWLEDGE_DIR, else ~/.local/share/kforge/knowledge)");
        return 0;
    }
    const bool resume = o.has("--resume");
    if (resume)
        for (const char *opt : {"--family", "--shape", "--dtype", "--op", "--rows", "--cols", "--backend", "--proposer", "--base-url", "--card"})
            if (o.has(opt))
                throw Error(std::string("--resume goes on with the session's own operator, backend and proposer; ") + opt
                            + " cannot change them");
    const auto path = o.get("--session", "kforge-session.kforge");
    if (resume && !std::filesystem::exists(path))
        throw Error("cannot resume '" + path + "': no such file");
    // Read first, write later: a bad option must leave the file as it was. The defaults of a resumed
    // search are what it ran with.
    const ResumableSearch was = resume ? lastSearch(SessionStore(path, SessionStore::Mode::ReadOnly)) : ResumableSearch{};
    if (was.campaign && o.has("--nodes"))
        throw Error("'" + path + "' holds a campaign: its plan gives each operator its nodes, so --nodes cannot change them");
    const SearchOptions defaults = resume ? was.options : SearchOptions{};
    const auto card = resume ? was.op.card : chosenCard(o);
    SearchOptions so;
    so.maxNodes = o.count("--nodes", defaults.maxNodes, 1, 1000000);
    so.maxSeconds = o.real("--seconds", 0, 0, 1e7);
    so.stallNodes = o.count("--stall", 0, 0, 1000000);
    so.seed = uint64_t(o.integer("--seed", int64_t(defaults.seed), 0, std::numeric_limits<int64_t>::max()));
    so.eval.benchSamples = o.count("--samples", defaults.eval.benchSamples, 1, 100000);
    so.eval.deadlineMs = o.count("--deadline-ms", defaults.eval.deadlineMs, 1, kMaxDeadlineMs);
    so.mcts.exploration = o.real("--exploration", defaults.mcts.exploration, 0, 100);
    so.mcts.widenK = o.real("--widen-k", defaults.mcts.widenK, 0, 1000);
    so.mcts.widenAlpha = o.real("--widen-alpha", defaults.mcts.widenAlpha, 0, 1);
    so.mcts.maxRepairs = o.count("--max-repairs", defaults.mcts.maxRepairs, 0, 1000);
    so.mcts.pruneMargin = o.real("--prune-margin", defaults.mcts.pruneMargin, 0, 100);
    so.mcts.pruneMinVisits = o.count("--prune-min-visits", defaults.mcts.pruneMinVisits, 1, 1000000);
    so.roots = o.count("--roots", defaults.roots, 0, 1000);
    so.mcts.bestBackup = o.has("--best-backup") || defaults.mcts.bestBackup;
    const auto backend = resume ? was.session.backend : o.choice("--backend", "cpu", kBackends);
    so.backend = backend;
    if (!o.has("--no-lessons"))
        so.lessonsDir = knowledge::userDir();
    const auto proposerSpec = resume ? was.proposerSpec : o.get("--proposer", "templates");
    const bool llmProposer = proposerSpec != "templates";
    if (!llmProposer && (o.has("--base-url") || o.has("--budget-usd")))
        throw Error("options --base-url and --budget-usd are for --proposer llm:PROVIDER/MODEL");
    if (o.has("--base-url"))
        try {
            llm::checkBaseUrl(o.get("--base-url"));
        } catch (const Error &e) {
            throw Error(std::string("option --base-url: ") + e.what());
        }
    const double budget = o.real("--budget-usd", was.budgetUsd, 0, 1e6);

    PoolOptions po;
    po.command = o.get("--worker", defaultWorkerCommand());
    // "auto": one worker per local GPU for the cuda backend (each takes the GPU of its slot).
    if (o.get("--workers") == "auto")
        po.workers = backend == "cuda" ? std::max(1, localGpuCount()) : 1;
    else if (o.has("--workers"))
        po.workers = int(parseInteger("--workers", o.get("--workers"), 1, kMaxWorkers, "auto"));
    else if (resume)
        po.workers = was.workers;
    po.compileAhead = o.count("--compile-ahead", po.compileAhead, 0, 8);
    // The workers first: one that cannot start, or offers no such backend, leaves no session file behind.
    WorkerPool pool(po);
    pool.start();
    pool.requireBackend(backend);
    SessionStore store(path);
    ProposerChoice choice;
    choice.spec = proposerSpec;
    choice.baseUrl = resume ? was.baseUrl : o.get("--base-url");
    choice.budget = budget;
    const auto proposer = makeProposer(choice, store, backend);

    int64_t sessionId = was.session.id, opId = was.op.id;
    if (!resume) {
        SessionInfo info;
        info.name = "search " + card.key;
        info.workload = o.has("--family") || o.has("--card") ? "single operator" : demoWorkload().name;
        info.backend = backend;
        info.proposer = proposer->name();
        // What --resume needs to go on with the same search.
        info.options = resumeOptions(so, po.workers, proposerSpec, choice.baseUrl, budget);
        sessionId = store.createSession(info);
        opId = store.addOperator(sessionId, card);
    } else {
        store.setSessionStatus(sessionId, "running");
    }
    if (was.campaign) {
        std::printf("resuming campaign %s (%zu operators) with %d worker(s); session %s\n", was.session.workload.c_str(), was.steps.size(),
                    pool.size(), path.c_str());
        const auto run = runSteps(store, pool, *proposer, so, sessionId, was.steps);
        std::printf("campaign %s; session %s\n", run.stopped ? "stopped" : "done", path.c_str());
        if (llmProposer)
            printLlmTotals(store, sessionId);
        return run.stopped ? 130 : 0;
    }

    SearchEngine engine(store, pool, *proposer, so);
    g_engine = &engine;
    std::signal(SIGINT, onStopSignal);
    std::signal(SIGTERM, onStopSignal);
    PrintingObserver obs;
    std::printf("%s %s (%s) with %d worker(s); session %s\n", resume ? "resuming" : "searching", card.key.c_str(), card.atenOp.c_str(),
                pool.size(), path.c_str());
    const auto prog = engine.run(sessionId, opId, card, &obs);
    g_engine = nullptr;
    const bool interrupted = prog.stopReason == "interrupted";
    if (interrupted)
        pool.abort();
    else
        pool.shutdown();
    store.setSessionStatus(sessionId, prog.stopReason == "stopped" || interrupted ? "stopped" : "finished");
    store.checkpoint();
    if (!prog.reverified.empty())
        std::printf("re-verified: %s\n", prog.reverified.c_str());
    std::printf("done (%s): %d evaluated, %d failed, %d accepted; best %.3fx (node %lld) in %.1f s\n", prog.stopReason.c_str(),
                prog.evaluated, prog.failed, prog.accepted, prog.bestSpeedup, (long long)prog.bestNode, prog.elapsedSeconds);
    if (!prog.lesson.empty())
        std::printf("lesson: %s\n", prog.lesson.c_str());
    if (!prog.lessonNote.empty())
        std::fprintf(stderr, "kforge-cli: %s\n", prog.lessonNote.c_str());
    if (llmProposer)
        printLlmTotals(store, sessionId);
    return interrupted ? 130 : 0;
}

// A campaign: one session, one search per operator card of a profiled workload, the node budget spread
// by what each operator could save (core/search/campaign.h), the plan shown before anything runs.
int campaignCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--workload", true}, {"--nodes", true}, {"--min-nodes", true}, {"--plan", false},
                           {"--session", true}, {"--backend", true}, {"--worker", true}, {"--samples", true}, {"--deadline-ms", true},
                           {"--seed", true}, {"--proposer", true}, {"--base-url", true}, {"--budget-usd", true}, {"--no-lessons", false}});
    if (o.has("--help") || !o.has("--workload")) {
        std::fputs("usage: kforge-cli campaign --workload W.json [options]\n\n"
                   "Searches every operator card of a profiled workload (kforge-cli profile W.json) in one session, the\n"
                   "node budget spread by the time each operator could save: its time in the workload less the same\n"
                   "calls at the roofline (Amdahl). The plan is printed first.\n\n"
                   "  --workload FILE    a profiled workload file (with cards)\n"
                   "  --nodes N          candidates in all (default 48)\n"
                   "  --min-nodes N      at least this many per operator worth searching, budget allowing (default 2)\n"
                   "  --plan             print the plan and stop\n"
                   "  --session FILE     session file to write (default W.campaign.kforge)\n"
                   "  --backend B        cpu (default) or cuda\n"
                   "  --worker CMD, --samples N, --deadline-ms MS, --seed N, --proposer P, --base-url URL, --budget-usd X,\n"
                   "  --no-lessons       as for kforge-cli search\n",
                   o.has("--help") ? stdout : stderr);
        return o.has("--help") ? 0 : 2;
    }
    const auto workload = loadWorkloadFile(o.get("--workload"));
    if (workload.cards.empty())
        throw Error("workload '" + o.get("--workload") + "' has no operator cards: profile it first (kforge-cli profile " + o.get("--workload") + ")");
    const int total = o.count("--nodes", 48, 1, 1000000);
    const int minNodes = o.count("--min-nodes", 2, 0, 1000000);
    const auto backend = o.choice("--backend", "cpu", kBackends);
    const auto proposerSpec = o.get("--proposer", "templates");
    const bool llmProposer = proposerSpec != "templates";
    if (!llmProposer && (o.has("--base-url") || o.has("--budget-usd")))
        throw Error("options --base-url and --budget-usd are for --proposer llm:PROVIDER/MODEL");
    SearchOptions so;
    so.seed = uint64_t(o.integer("--seed", 1, 0, std::numeric_limits<int64_t>::max()));
    so.eval.benchSamples = o.count("--samples", so.eval.benchSamples, 1, 100000);
    so.eval.deadlineMs = o.count("--deadline-ms", so.eval.deadlineMs, 1, kMaxDeadlineMs);
    so.backend = backend;
    if (!o.has("--no-lessons"))
        so.lessonsDir = knowledge::userDir();
    std::string sessionPath = o.get("--session");
    if (sessionPath.empty()) {
        sessionPath = withoutJson(o.get("--workload")) + ".campaign.kforge";
    }

    PoolOptions po;
    po.command = o.get("--worker", defaultWorkerCommand());
    po.measureDevices = true; // the plan's floors need the copy rate
    WorkerPool pool(po);
    pool.start();
    pool.requireBackend(backend);
    const auto device = knowledge::targetDevice(pool.hellos(), backend);
    const double bandwidth = copyBandwidth(pool.hellos(), backend);
    const auto source = campaignSource(workload, bandwidth, backend, llmProposer);
    const double workloadMs = source.workloadMs;
    const auto plan = planCampaign(source.inputs, total, workloadMs, minNodes);
    std::printf("campaign over %s: %zu operator cards, %.3f ms at top level, %d of %d nodes planned; on %s (copy %.0f GB/s)\n",
                workload.name.c_str(), workload.cards.size(), workloadMs, plan.nodes, total,
                device.is_object() ? device.value("name", backend).c_str() : backend.c_str(), bandwidth / 1e9);
    std::printf("%-40s %10s %10s %10s %6s  %s\n", "operator", "time_ms", "floor_ms", "savable_ms", "nodes", "note");
    for (const auto &it : plan.items)
        std::printf("%-40s %10.3f %10s %10.3f %6d  %s\n", it.key.c_str(), it.workloadMs,
                    it.floorMs >= 0 ? std::to_string(it.floorMs).substr(0, 8).c_str() : "-", it.savableMs, it.nodes, it.note.c_str());
    std::printf("if every planned operator reached its roofline: %.3fx for the workload (Amdahl)\n", amdahlBound(plan));
    std::fflush(stdout);
    if (o.has("--plan") || plan.nodes == 0) {
        pool.shutdown();
        return 0;
    }

    SessionStore store(sessionPath);
    ProposerChoice choice;
    choice.spec = proposerSpec;
    choice.baseUrl = o.get("--base-url");
    choice.budget = o.real("--budget-usd", 0, 0, 1e6);
    const auto proposer = makeProposer(choice, store, backend);
    SessionInfo info;
    info.name = "campaign " + workload.name;
    info.workload = workload.name;
    info.backend = backend;
    info.proposer = proposer->name();
    // What `search --resume` needs to go on with it: the options and the plan, every planned operator
    // added up front (as the window's campaign does).
    so.maxNodes = plan.nodes;
    info.options = resumeOptions(so, pool.size(), proposerSpec, choice.baseUrl, choice.budget);
    std::vector<std::pair<std::string, int>> planned;
    for (const auto &it : plan.items)
        if (it.nodes > 0)
            planned.push_back({it.key, it.nodes});
    setCampaignPlan(info.options, planned);
    const auto sessionId = store.createSession(info);
    std::vector<ResumeStep> steps;
    for (const auto &[key, nodes] : planned) {
        const auto card = std::find_if(workload.cards.begin(), workload.cards.end(), [&](const OperatorCard &c) { return c.key == key; });
        steps.push_back({{store.addOperator(sessionId, *card), sessionId, *card}, nodes});
    }
    const auto run = runSteps(store, pool, *proposer, so, sessionId, steps);
    std::printf("campaign %s: accepted kernels give %.3fx for the workload by Amdahl's law (at most %.3fx at the roofline); session %s%s\n",
                run.stopped ? "stopped" : "done", amdahlSpeedup(plan, run.best), amdahlBound(plan), sessionPath.c_str(),
                run.stopped ? (" (kforge-cli search --resume --session " + sessionPath + " goes on with it)").c_str() : "");
    return run.stopped ? 130 : 0;
}

int evalCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--source", true}, {"--backend", true}, {"--card", true}, {"--op", true},
                           {"--rows", true}, {"--cols", true}, {"--samples", true}, {"--deadline-ms", true},
                           {"--worker", true}, {"--verify-only", false},
                           {"--family", true}, {"--shape", true}, {"--dtype", true}, {"--launch", true}});
    if (o.has("--help") || !o.has("--source")) {
        std::puts("usage: kforge-cli eval --source FILE [options]\n\n"
                  "Evaluates one candidate against one operator card through a worker and prints the verdict\n"
                  "as JSON: compiled, correct, trials, timings, speedup and the reasons for rejection.\n"
                  "Exit status: 0 correct (accepted or not faster), 1 rejected, 2 usage or system error.\n\n"
                  "  --source FILE      candidate source (cpu: C++ defining extern \"C\" kforge_entry)\n"
                  "  --backend B        cpu or cuda (default: cuda for a .cu file, else cpu)\n"
                  "  --card FILE        operator card JSON (default: the demo workload's softmax; see 'kforge-cli card')\n"
                  "  --rows R --cols C  demo card shape (default 256 x 1024)\n"
                  "  --family F --shape S --dtype D   a card of another family (see 'kforge-cli templates')\n"
                  "  --launch FILE      CUDA launch plan JSON (cuda backend; default: the source's\n"
                  "                     /* kforge-launch {...} */ comment)\n"
                  "  --samples N        timed runs per side (default 30)\n"
                  "  --verify-only      skip the benchmark\n"
                  "  --deadline-ms MS   evaluation deadline (default 60000)\n"
                  "  --worker CMD       command line that starts a worker");
        return o.has("--help") ? 0 : 2;
    }
    // Everything the command line says is checked before a worker is started.
    const auto sourcePath = o.get("--source");
    // A .cu file is a CUDA candidate unless --backend says otherwise.
    const bool cuFile = sourcePath.size() > 3 && sourcePath.compare(sourcePath.size() - 3, 3, ".cu") == 0;
    Candidate cand;
    cand.backend = o.choice("--backend", cuFile ? "cuda" : "cpu", kBackends);
    EvalOptions eo;
    eo.benchSamples = o.count("--samples", eo.benchSamples, 1, 100000);
    eo.deadlineMs = o.count("--deadline-ms", eo.deadlineMs, 1, kMaxDeadlineMs);
    eo.benchmark = !o.has("--verify-only");
    if (o.has("--launch") && cand.backend != "cuda")
        throw Error("option --launch gives a CUDA launch plan; this is a " + cand.backend + " candidate (pass --backend cuda)");
    const OperatorCard card = chosenCard(o);
    cand.source = readFile(sourcePath);
    if (o.has("--launch")) {
        try {
            cand.launch = nlohmann::json::parse(readFile(o.get("--launch")));
        } catch (const nlohmann::json::exception &e) {
            throw Error("the launch plan '" + o.get("--launch") + "' is not valid JSON: " + e.what());
        }
        if (!cand.launch.is_object())
            throw Error("the launch plan '" + o.get("--launch") + "' must be a JSON object, not " + cand.launch.type_name());
    } else if (cand.backend == "cuda") {
        std::optional<nlohmann::json> plan;
        try {
            plan = launchPlanFromComment(cand.source);
        } catch (const Error &e) {
            throw Error("'" + sourcePath + "': " + e.what());
        }
        if (!plan)
            throw Error("this CUDA candidate has no launch plan: pass --launch FILE or put a /* kforge-launch {...} */ comment in the source");
        cand.launch = std::move(*plan);
    }
    PoolOptions po;
    po.command = o.get("--worker", defaultWorkerCommand());
    WorkerPool pool(po);
    pool.start();
    pool.requireBackend(cand.backend);
    const Verdict v = pool.evaluate(card, cand, eo);
    pool.shutdown();
    nlohmann::json j = v;
    // Compiler logs quote the source, which may hold any bytes.
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    return v.correct() ? 0 : 1;
}

int showCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--session", true}, {"--best", false}, {"--node", true}});
    if (o.has("--help") || !o.has("--session")) {
        std::puts("usage: kforge-cli show --session FILE [--best | --node ID]\n\n"
                  "Prints every session in the file and its search tree; with --best, the fastest correct node\n"
                  "of each session as one JSON line (template, parameters, medians, speedup, roofline floor);\n"
                  "with --node, that node, the decisions on it and why the search chose to make it.");
        return o.has("--help") ? 0 : 2;
    }
    if (o.has("--best") && o.has("--node"))
        throw Error("options --best and --node each pick what to show: pass one of them");
    SessionStore store(o.get("--session"), SessionStore::Mode::ReadOnly);
    if (o.has("--node")) {
        printNode(store, o.integer("--node", 0, 1, std::numeric_limits<int64_t>::max()));
        return 0;
    }
    if (o.has("--best")) {
        for (const auto &s : store.sessions()) {
            const NodeRecord *best = nullptr;
            const auto nodes = store.nodes(s.id);
            for (const auto &n : nodes)
                if ((n.status == "accepted" || n.status == "not_faster") && (!best || n.speedup > best->speedup))
                    best = &n;
            nlohmann::json j = {{"session", s.id}, {"name", s.name}, {"nodes", nodes.size()}};
            if (best) {
                const auto d = store.nodeDetail(best->id);
                j["best"] = {{"node", best->id}, {"template", best->templateId}, {"params", best->params},
                             {"status", best->status}, {"speedup", best->speedup},
                             {"candidate_median_us", d->verdict.candidate.summary.median},
                             {"baseline_median_us", d->verdict.baseline.summary.median},
                             {"roofline_us", best->rooflineUs}};
            }
            std::cout << j.dump() << std::endl;
        }
        return 0;
    }
    for (const auto &s : store.sessions()) {
        std::printf("session %lld: %s [%s] workload %s, %s proposer\n", (long long)s.id, s.name.c_str(), s.status.c_str(),
                    s.workload.c_str(), s.proposer.c_str());
        std::map<int64_t, int> depth;
        for (const auto &n : store.nodes(s.id)) {
            const int d = n.parentId ? depth[*n.parentId] + 1 : 0;
            depth[n.id] = d;
            std::printf("%*s#%lld %s %s%s %s\n", d * 2, "", (long long)n.id, n.templateId.c_str(), n.status.c_str(),
                        n.pruned.empty() ? "" : " [pruned]", n.summary.c_str());
        }
    }
    return 0;
}

int cardCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--rows", true}, {"--cols", true}, {"--op", true},
                           {"--family", true}, {"--shape", true}, {"--dtype", true}});
    if (o.has("--help")) {
        std::puts("usage: kforge-cli card [--rows R --cols C] [--op KEY] [--family F --shape S --dtype D]\n\n"
                  "Prints an operator card as JSON (the demo's softmax by default), a starting point for your own.");
        return 0;
    }
    std::cout << nlohmann::json(demoCard(o)).dump(2) << std::endl;
    return 0;
}

int templatesCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--family", true}, {"--backend", true}, {"--render", true}, {"--params", true},
                           {"--shape", true}, {"--dtype", true}, {"--rows", true}, {"--cols", true}, {"--launch-out", true}});
    if (o.has("--help")) {
        std::puts("usage: kforge-cli templates [--family F [--shape S] [--dtype D]] [--backend B]\n"
                  "       kforge-cli templates --render ID --params JSON --family F [--shape S] [--dtype D] [--launch-out FILE]\n\n"
                  "Lists the offline generator's kernel templates and their tuning spaces (with a card's shape, each\n"
                  "template's starting point for it), or renders one point\n"
                  "of one template for a card: the source goes to stdout, the CUDA launch plan to --launch-out.");
        return 0;
    }
    if (o.has("--backend"))
        o.choice("--backend", "", kBackends);
    if (o.has("--family"))
        o.choice("--family", "", cardFamilies());
    o.integer("--rows", 256, 1, kMaxExtent);
    o.integer("--cols", 1024, 1, kMaxExtent);
    const auto &lib = TemplateLibrary::builtin();
    // The card a point is rendered for, or seeds are listed for: --family, --dtype (float32), --shape.
    const auto cardOf = [&](const std::string &family, const std::string &shape) {
        return demoCard(Options(Args{"--family", family, "--dtype", o.get("--dtype", "float32"), "--shape", shape},
                                {{"--family", true}, {"--dtype", true}, {"--shape", true}}));
    };
    if (o.has("--render")) {
        const auto *t = lib.find(o.get("--render"));
        if (!t)
            throw Error("no template '" + o.get("--render") + "' (see 'kforge-cli templates')");
        const auto card = cardOf(o.get("--family", t->family), o.get("--shape", "rows=" + o.get("--rows", "256") + ",cols=" + o.get("--cols", "1024")));
        nlohmann::json params;
        try {
            params = nlohmann::json::parse(o.get("--params", "{}"));
        } catch (const nlohmann::json::exception &e) {
            throw Error(std::string("--params is not valid JSON: ") + e.what());
        }
        for (const auto &[k, values] : t->space)
            if (!params.contains(k))
                params[k] = values.front();
        if (t->valid && !t->valid(params, card))
            throw Error("the point " + params.dump() + " is outside " + t->id + "'s valid space for this card");
        std::cout << t->render(params, card);
        if (o.has("--launch-out") && t->launch) {
            std::ofstream out(o.get("--launch-out"));
            out << t->launch(params, card).dump(2) << std::endl;
        }
        return 0;
    }
    // With --shape (and one --family), each template's seed for that card, or why it declines it.
    std::optional<OperatorCard> card;
    if (o.has("--shape") && o.has("--family"))
        card = cardOf(o.get("--family"), o.get("--shape"));
    for (const auto &f : cardFamilies())
        for (const char *backend : {"cpu", "cuda"}) {
            if ((o.has("--family") && o.get("--family") != f) || (o.has("--backend") && o.get("--backend") != backend))
                continue;
            for (const auto *t : lib.forFamily(f, backend)) {
                std::printf("%-28s %s\n", t->id.c_str(), t->description.c_str());
                if (card && t->seed) {
                    const auto seed = t->seed(*card);
                    const bool ok = !t->valid || t->valid(seed, *card);
                    std::printf("    %-12s %s%s\n", "seed", seed.dump().c_str(), ok ? "" : " (declines this card)");
                }
                for (const auto &[k, values] : t->space) {
                    std::string vs;
                    for (const auto &v : values)
                        vs += (vs.empty() ? "" : " ") + v.dump();
                    std::printf("    %-12s %s\n", k.c_str(), vs.c_str());
                }
            }
        }
    return 0;
}

int profileCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--session", true}, {"--node", true}, {"--worker", true}, {"--timeout-s", true}});
    if (o.has("--help") || !o.has("--session") || !o.has("--node")) {
        std::puts("usage: kforge-cli profile --session FILE --node N [--worker CMD] [--timeout-s S]\n\n"
                  "Profiles a CUDA node with Nsight Compute on a worker's host: memory and compute throughput as a\n"
                  "share of peak, achieved occupancy, the top stall reasons. The report is stored on the node (the\n"
                  "GUI's inspector shows it) and printed as JSON. Exit status 1 when it could not be profiled.");
        return o.has("--help") ? 0 : 2;
    }
    SessionStore store(o.get("--session"));
    const int64_t nodeId = o.integer("--node", 0, 1, std::numeric_limits<int64_t>::max());
    const int timeout = o.count("--timeout-s", 300, 1, 86400);
    const auto detail = store.nodeDetail(nodeId);
    if (!detail)
        throw Error("the session has no node " + std::to_string(nodeId));
    const auto card = store.cardOf(detail->node);
    PoolOptions po;
    po.command = o.get("--worker", defaultWorkerCommand());
    WorkerPool pool(po);
    pool.start();
    auto req = profileRequest(card, detail->candidate);
    req["timeout_s"] = timeout;
    const auto reply = pool.request(req, (timeout + 30) * 1000);
    pool.shutdown();
    const auto text = [&](const char *key) {
        const auto it = reply.find(key);
        return it != reply.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (text("type") != "profile" || !reply.contains("profile") || !reply["profile"].is_object()) {
        auto why = text("error").empty() ? text("message") : text("error");
        if (why.empty())
            why = reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        std::fprintf(stderr, "kforge-cli profile: node %lld was not profiled: %s\n", (long long)nodeId, why.c_str());
        return 1;
    }
    store.addProfile(nodeId, reply["profile"]);
    auto shown = reply["profile"];
    shown.erase("metrics");
    std::cout << shown.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    return 0;
}

// A point of the template's space, each parameter's value drawn uniformly.
static nlohmann::json drawPoint(const KernelTemplate &t, std::mt19937_64 &rng)
{
    nlohmann::json point = nlohmann::json::object();
    for (const auto &[k, values] : t.space)
        point[k] = values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)];
    return point;
}

// The template's first point in the space's order, or, when that one is invalid for the card, the
// first valid one of 2000 drawn with a fixed seed (so the check is reproducible); none if none is.
static std::optional<nlohmann::json> firstValidPoint(const KernelTemplate &t, const OperatorCard &card)
{
    nlohmann::json point = nlohmann::json::object();
    for (const auto &[k, values] : t.space)
        point[k] = values.front();
    if (!t.valid || t.valid(point, card))
        return point;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2000; ++i) {
        point = drawPoint(t, rng);
        if (t.valid(point, card))
            return point;
    }
    return std::nullopt;
}

// The shape each family's templates are checked at: a ragged row length, so vector paths and their
// tails are both exercised.
static ShapeBindings checkShape(const std::string &family)
{
    return family == "group_norm"                     ? ShapeBindings{{"n", 4}, {"c", 64}, {"hw", 1024}, {"groups", 8}}
           : family == "cross_entropy"                ? ShapeBindings{{"rows", 64}, {"vocab", 32000}}
           : dimFamily(family)                        ? ShapeBindings{{"outer", 8}, {"dim", 300}, {"inner", 1000}}
           : nchwFamily(family)                       ? ShapeBindings{{"n", 4}, {"c", 16}, {"hw", 4096}}
           : family == "scaled_masked_softmax"        ? ShapeBindings{{"rows", 256}, {"cols", 4096}, {"mrows", 64}}
           : family.rfind("rotary_embedding", 0) == 0 ? ShapeBindings{{"b", 2}, {"s", 333}, {"h", 5}, {"d", 80}}
                                                      : ShapeBindings{{"rows", 200}, {"cols", 4096}};
}

// check-templates --box-shapes N: what a pack promises. For each template and dtype, a card at a drawn
// shape, the template's seed for it and one other valid point drawn from its space, each verified on
// that card and, where the guard accepts it there, at N shapes drawn inside the box the pack's guard
// would then run it for (ops/shape_box.h), the held-out shapes left out. Every draw comes from --seed,
// so a failure is reproduced by the same command.
static void checkInsideBoxes(const std::string &family, const std::string &backend, DType dt, int shapes, int64_t maxElements,
                             std::mt19937_64 &rng,
                             const std::function<bool(const OperatorCard &, const Candidate &, const std::string &, const std::string &, bool)> &check)
{
    // A card at a drawn shape that makeCard accepts (some symbols constrain others) and that stays small.
    auto drawCard = [&](const std::function<ShapeBindings()> &draw) -> std::optional<OperatorCard> {
        for (int tries = 0; tries < 200; ++tries) {
            const auto shape = draw();
            try {
                auto card = makeCard(family, shape, dt);
                if (cardElements(card, card.shape) <= maxElements)
                    return card;
            } catch (const Error &) {
            }
        }
        return std::nullopt;
    };
    for (const auto *t : TemplateLibrary::builtin().forFamily(family, backend)) {
        for (const bool seeded : {true, false}) {
            std::optional<OperatorCard> card;
            nlohmann::json point;
            for (int tries = 0; tries < 20 && !card; ++tries) {
                card = drawCard([&] { return drawShapeLike(checkShape(family), rng); });
                if (!card)
                    break;
                point = seeded && t->seed ? t->seed(*card) : drawPoint(*t, rng);
                if (t->valid && !t->valid(point, *card))
                    card.reset();
            }
            if (!card) {
                std::printf("skip %-14s %-9s %-30s no %s point at the shapes drawn\n", family.c_str(), dtypeName(dt).c_str(), t->id.c_str(),
                            seeded ? "seed" : "valid");
                continue;
            }
            TemplateProposer proposer(backend);
            const auto candidate = proposer.render(*t, point, *card).candidate;
            // Only a kernel the guard accepts on its own card goes into a pack (the space holds points it
            // refuses, such as the cruder exp approximations).
            const auto made = (seeded ? "seed " : "") + point.dump() + " made for " + shapeText(card->shape);
            if (!check(*card, candidate, t->id, made + ", refused there", false))
                continue;
            const auto box = verifiedBox(*card);
            for (int i = 0; i < shapes; ++i) {
                auto at = drawCard([&] { return drawInsideBox(box, rng); });
                if (!at)
                    continue;
                at->heldOutShapes.clear();
                check(*at, candidate, t->id, made + ", at " + shapeText(at->shape), true);
            }
        }
    }
}

int checkTemplatesCommand(const Args &args)
{
    const Options o(args, {{"--help", false}, {"--backend", true}, {"--dtypes", true}, {"--family", true}, {"--worker", true},
                           {"--workers", true}, {"--deadline-ms", true}, {"--box-shapes", true}, {"--seed", true}, {"--max-elements", true}});
    if (o.has("--help")) {
        std::puts("usage: kforge-cli check-templates [--backend cpu|cuda] [--dtypes float32,float16,bfloat16] [--family F]\n"
                  "                                  [--box-shapes N [--seed S] [--max-elements E]]\n\n"
                  "Verifies the first valid point of every template of the backend, for every family and dtype, through\n"
                  "the guard (no benchmark), and prints one line per case and a final 'N passed, M failed' line. Templates\n"
                  "whose blocks wait for each other are also checked at their seed on a long row, with and without waiting.\n"
                  "With --box-shapes, instead: each template's seed and one other valid point, made for a card at a shape\n"
                  "drawn from --seed (default 1), are verified at N shapes drawn inside the range of shapes a pack would\n"
                  "run that kernel for (every card at most E elements, default 4194304), on inputs also drawn from --seed,\n"
                  "so a run repeats exactly.\n"
                  "Exit status 0 only when every case passed.");
        return 0;
    }
    const int boxShapes = o.count("--box-shapes", 0, 1, 1000);
    const auto seed = uint64_t(o.integer("--seed", 1, 0, std::numeric_limits<int64_t>::max()));
    std::mt19937_64 rng(seed);
    const int64_t maxElements = o.integer("--max-elements", int64_t(1) << 22, 1024, int64_t(1) << 32);
    const auto backend = o.choice("--backend", "cpu", kBackends);
    if (o.has("--family"))
        o.choice("--family", "", cardFamilies());
    std::vector<DType> dtypes;
    {
        const auto list = o.get("--dtypes", backend == "cuda" ? "float32,float16,bfloat16" : "float32");
        size_t pos = 0;
        while (pos <= list.size()) {
            const auto comma = list.find(',', pos);
            const auto name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
            if (std::find(kDtypes.begin(), kDtypes.end(), name) == kDtypes.end())
                throw Error("option --dtypes takes a comma-separated list of " + joined(kDtypes) + ", not '" + list + "'");
            dtypes.push_back(dtypeFromName(name));
            if (comma == std::string::npos)
                break;
            pos = comma + 1;
        }
    }
    PoolOptions po;
    po.command = o.get("--worker", defaultWorkerCommand());
    po.workers = o.count("--workers", 1, 1, kMaxWorkers);
    EvalOptions eo;
    eo.benchmark = false;
    eo.deadlineMs = o.count("--deadline-ms", 60000, 1, kMaxDeadlineMs);
    if (boxShapes > 0) // not 0, which draws fresh inputs
        eo.inputSeed = seed * 0x9E3779B97F4A7C15ull + 1;
    WorkerPool pool(po);
    pool.start();
    pool.requireBackend(backend);
    int passed = 0, failed = 0;
    // One case through the guard, and its line; a case that does not count (a box's own card) is only
    // mentioned when the guard refuses it.
    auto verify = [&](const std::string &family, DType dt, const OperatorCard &card, const Candidate &c, const std::string &id,
                      const std::string &what, bool counts) {
        const auto v = pool.evaluate(card, c, eo);
        const bool ok = v.correct();
        if (counts)
            (ok ? passed : failed)++;
        if (counts || !ok)
            std::printf("%s %-14s %-9s %-30s %s %s\n", ok ? "PASS" : counts ? "FAIL" : "skip", family.c_str(), dtypeName(dt).c_str(), id.c_str(),
                        what.c_str(), ok ? "" : (v.reasons.empty() ? statusName(v.status) : v.reasons.front().message).substr(0, 300).c_str());
        std::fflush(stdout);
        return ok;
    };
    for (const auto &family : cardFamilies()) {
        if (o.has("--family") && o.get("--family") != family)
            continue;
        if (boxShapes > 0) {
            for (DType dt : dtypes)
                checkInsideBoxes(family, backend, dt, boxShapes, maxElements, rng,
                                 [&](const OperatorCard &card, const Candidate &c, const std::string &id, const std::string &what, bool counts) {
                                     return verify(family, dt, card, c, id, what, counts);
                                 });
            continue;
        }
        const ShapeBindings shape = checkShape(family);
        // Templates only for rows too long for one block (the row-group ones) get a long, ragged row.
        const ShapeBindings longShape = {{"rows", 16}, {"cols", 150001}};
        const ShapeBindings alignedLongShape = {{"rows", 16}, {"cols", 150016}};
        const bool softmax = family == "softmax" || family == "log_softmax";
        for (DType dt : dtypes) {
            const auto shortCard = makeCard(family, shape, dt);
            // Over a middle dimension, the kernels for contiguous rows (inner 1) get such rows.
            const std::optional<OperatorCard> longCard = softmax           ? std::optional(makeCard(family, longShape, dt))
                                                         : dimFamily(family) ? std::optional(makeCard(family, {{"outer", 64}, {"dim", 5001}, {"inner", 1}}, dt))
                                                                             : std::nullopt;
            // Rows and planes past one block's shared memory, for the row groups of the sum and
            // variance norms: ragged, and a multiple of the widest pack.
            const bool rowGroupNorm = dimFamily(family) || family == "instance_norm";
            auto longerCard = [&](int64_t len) {
                return family == "instance_norm" ? makeCard(family, {{"n", 2}, {"c", 3}, {"hw", len}}, dt)
                                                 : makeCard(family, {{"outer", 16}, {"dim", len}, {"inner", 1}}, dt);
            };
            const std::optional<OperatorCard> longestCard = rowGroupNorm ? std::optional(longerCard(50001)) : std::nullopt;
            const std::optional<OperatorCard> alignedLongCard = softmax        ? std::optional(makeCard(family, alignedLongShape, dt))
                                                                : rowGroupNorm ? std::optional(longerCard(50016))
                                                                               : std::nullopt;
            auto check = [&](const OperatorCard &card, const Candidate &c, const std::string &id, const std::string &what) {
                verify(family, dt, card, c, id, what, true);
            };
            for (const auto *t : TemplateLibrary::builtin().forFamily(family, backend)) {
                const OperatorCard *card = &shortCard;
                auto point = firstValidPoint(*t, *card);
                if (!point && longCard) {
                    card = &*longCard;
                    point = firstValidPoint(*t, *card);
                }
                if (!point && longestCard) {
                    card = &*longestCard;
                    point = firstValidPoint(*t, *card);
                }
                if (!point) {
                    std::printf("skip %-14s %-9s %-30s no valid point at this shape\n", family.c_str(), dtypeName(dt).c_str(), t->id.c_str());
                    continue;
                }
                TemplateProposer proposer(backend);
                const auto candidate = proposer.render(*t, *point, *card).candidate;
                check(*card, candidate, t->id, point->dump());
                // Over a middle dimension the seed is another kernel path at this shape (dim cut across
                // blocks, or held in registers): it too; so is a scan's (packs, prefetching).
                if ((dimFamily(family) || nchwFamily(family) || family == "frobenius_norm" || findScanOp(family)) && t->seed) {
                    const auto seed = t->seed(*card);
                    if (seed != *point && t->valid(seed, *card))
                        check(*card, proposer.render(*t, seed, *card).candidate, t->id, "seed " + seed.dump());
                }
                // Layer, RMS and group norm cut across blocks: their seed on a long row, vector paths included.
                if (t->id.find(".split") != std::string::npos && (family == "layer_norm" || family == "rms_norm" || family == "group_norm")) {
                    const auto longRow = family == "group_norm" ? makeCard(family, {{"n", 2}, {"c", 8}, {"hw", 37504}, {"groups", 2}}, dt)
                                                                : makeCard(family, alignedLongShape, dt);
                    const auto seed = t->seed(longRow);
                    if (t->valid(seed, longRow))
                        check(longRow, proposer.render(*t, seed, longRow).candidate, t->id, "seed " + seed.dump());
                }
                // Kernels whose blocks wait for each other: also their seed on a long row the vector
                // paths serve, once as it is and once with no waiting at all, so that the path where a
                // block gives up on the others and reads the whole row itself is verified too.
                if (alignedLongCard && candidate.source.find("KF_SPIN_LIMIT") != std::string::npos) {
                    const auto seed = t->seed(*alignedLongCard);
                    if (!t->valid(seed, *alignedLongCard))
                        continue;
                    auto c = proposer.render(*t, seed, *alignedLongCard).candidate;
                    check(*alignedLongCard, c, t->id, "seed " + seed.dump());
                    c.source = "#define KF_SPIN_LIMIT 0\n" + c.source;
                    check(*alignedLongCard, c, t->id, "seed " + seed.dump() + ", no waiting");
                }
            }
        }
    }
    pool.shutdown();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

} // namespace kforge::cli
