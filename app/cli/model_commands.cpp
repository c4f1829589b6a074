// kforge-cli model (built-in models written as workloads) and kforge-cli fastp (the fast_p report over
// imported problems). Both go through a worker: the only process that runs a model.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

#include "app/cli/commands.h"
#include "app/cli/workload_profile.h"
#include "proposers/template_library.h"
#include "proposers/template_proposer.h"
#include "search/search_engine.h"
#include "store/session_store.h"
#include "util/error.h"
#include "util/options.h"
#include "util/paths.h"
#include "workload/builtin_models.h"
#include "workload/fastp.h"
#include "workload/problem_cards.h"

namespace kforge::cli {

namespace {

const char *kModelUsage =
    "usage: kforge-cli model list\n"
    "       kforge-cli model NAME [--OPTION=VALUE...] --out WORKLOAD.json [--worker CMD]\n\n"
    "Writes a built-in model with random weights (nothing is downloaded, no Python runs) as a workload:\n"
    "the worker compiles the model's TorchScript with libtorch and saves it, seeded, as WORKLOAD.pt beside\n"
    "WORKLOAD.json, which kforge-cli profile (and every other workload command) takes. 'model list' shows\n"
    "the models and their options; --preset=h200 gives the sizes measured on the H200.\n";

const char *kFastpUsage =
    "usage: kforge-cli fastp DIR-or-WORKLOAD.json... [--nodes N] [--backend cpu|cuda] [--out STEM] [--json]\n"
    "                        [--session FILE] [--top N] [--samples N] [--seed N] [--worker CMD] [--python PYTHON]\n"
    "                        [--screen-all] [--compile-times DIR]\n\n"
    "For each imported problem (a workload from kforge-cli import; a folder means its .json workloads),\n"
    "profiles it in a worker (unless the file has its cards already), searches its problem cards (its\n"
    "whole forward, offered to every template family that fits) with the templates, and reports whether a\n"
    "correct kernel was found and its speedup over eager (the forward as the worker times it) and over\n"
    "torch.compile (measured by python/kforge_compile_time.py where a Python has torch.compile), with\n"
    "fast_0, fast_1 and fast_1.5 over both. A workload that is a model, not a problem, has its --top N\n"
    "(default 5) hottest cards of a template family searched instead, each one a row of the report\n"
    "(torch.compile is not measured for them). Every search is written to one session (--session).\n\n"
    "  --nodes N       candidates per card (default 8). A problem's cards are first screened with one node\n"
    "                  each, in order: the family of its one ATen call, then cards read from its traced\n"
    "                  forward (a fused chain, a norm's view), then views around a dimension it reduces\n"
    "                  over, then the others, until one computes the forward; those that did (or, when\n"
    "                  none did, those that failed for another reason than a wrong answer) go on to N\n"
    "  --screen-all    screen every card, not only until the first that computes the forward\n"
    "  --backend B     cpu (default) or cuda\n"
    "  --out STEM      writes STEM.md and STEM.json (default fastp-report)\n"
    "  --json          also prints the JSON report\n"
    "  --session FILE  the session every search writes (default STEM.kforge)\n"
    "  --top N         a model's cards to search, hottest first (default 5)\n"
    "  --samples N     timed runs per side (default 30)\n"
    "  --seed N        search seed (default 1)\n"
    "  --worker CMD    command line that starts a worker\n"
    "  --python PY     the Python for torch.compile (default: $KFORGE_PYTHON, python3, /usr/bin/python3)\n"
    "  --compile-times DIR\n"
    "                  torch.compile's times measured beforehand, DIR/<problem>.compile.json as written by\n"
    "                  python/kforge_compile_time.py PROBLEM.py... --out-dir DIR (one process for all, so\n"
    "                  torch and its compiler start once); a problem without one is measured as usual\n";

std::string folderOf(const std::string &p)
{
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

std::string baseName(const std::string &p)
{
    const auto slash = p.rfind('/');
    return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Value options (--name value) and flags; anything else is an error naming it.
std::map<std::string, std::string> parseOptions(const Args &args, size_t from, const std::map<std::string, bool> &known,
                                                std::vector<std::string> *positional = nullptr)
{
    std::map<std::string, std::string> o;
    for (size_t i = from; i < args.size(); ++i) {
        const auto &a = args[i];
        auto it = known.find(a);
        if (it == known.end()) {
            if (positional && a.rfind("--", 0) != 0) {
                positional->push_back(a);
                continue;
            }
            throw Error("unknown option '" + a + "' (see --help)");
        }
        if (o.count(a))
            throw Error("option " + a + " is given twice");
        if (it->second) {
            if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].rfind("--", 0) == 0)
                throw Error("option " + a + " needs a value");
            o[a] = args[++i];
        } else {
            o[a] = "1";
        }
    }
    return o;
}

std::string workerCommand(const std::map<std::string, std::string> &o)
{
    auto it = o.find("--worker");
    return it == o.end() ? defaultWorkerCommand() : it->second;
}

// --- fastp ---------------------------------------------------------------------------------------

struct NodeCollector : SearchObserver {
    std::vector<NodeRecord> finished;
    void nodeFinished(const NodeRecord &n) override
    {
        finished.push_back(n);
        std::printf("    node %-4lld %-24s %-12s %s\n", (long long)n.id, n.templateId.c_str(), n.status.c_str(), n.summary.c_str());
        std::fflush(stdout);
    }
};

std::vector<std::string> workloadFiles(const std::vector<std::string> &given)
{
    std::vector<std::string> out;
    for (const auto &g : given) {
        if (isFile(g)) {
            out.push_back(g);
            continue;
        }
        if (!isDir(g))
            throw Error("'" + g + "' is neither a workload file nor a folder of them");
        std::vector<std::string> found;
        if (DIR *d = ::opendir(g.c_str())) {
            while (const dirent *e = ::readdir(d)) {
                const std::string name = e->d_name;
                if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
                    // Only workload files: a report or any other JSON in the folder is passed over.
                    std::ifstream in(g + "/" + name);
                    std::string head(256, '\0');
                    in.read(head.data(), std::streamsize(head.size()));
                    if (head.find("\"kforge_workload\"") != std::string::npos)
                        found.push_back(g + "/" + name);
                }
            }
            ::closedir(d);
        }
        if (found.empty())
            throw Error("'" + g + "' holds no workload files (import its problems first: kforge-cli import " + g + ")");
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

// The ratio eager/compiled from python/kforge_compile_time.py's result, or nullopt with the reason in `why`.
std::optional<double> compileRatioOf(const nlohmann::json &j, std::string &why)
{
    if (!j.is_object()) {
        why = "python/kforge_compile_time.py wrote no result";
        return std::nullopt;
    }
    if (!j.value("available", false)) {
        why = j.value("why", std::string("torch.compile was not measured"));
        return std::nullopt;
    }
    const double eager = j.value("eager_ms", 0.0), compiled = j.value("compile_ms", 0.0);
    if (eager <= 0 || compiled <= 0) {
        why = "python/kforge_compile_time.py reported no times";
        return std::nullopt;
    }
    return eager / compiled;
}

// torch.compile against eager for one problem, by python/kforge_compile_time.py; the ratio eager/compiled,
// or nullopt with the reason in `why`.
std::optional<double> compileRatio(const std::string &python, const std::string &problemFile, const std::string &backend, std::string &why)
{
    std::string helper;
    if (const char *env = std::getenv("KFORGE_COMPILE_TIME_HELPER"))
        helper = env;
    else
        for (const auto &p : {executableDir() + "/../share/kforge/python/kforge_compile_time.py",
#ifdef KFORGE_SOURCE_PYTHON_DIR
                              std::string(KFORGE_SOURCE_PYTHON_DIR) + "/kforge_compile_time.py",
#endif
                              executableDir() + "/../../../python/kforge_compile_time.py"})
            if (isFile(p)) {
                helper = p;
                break;
            }
    if (helper.empty()) {
        why = "python/kforge_compile_time.py is not installed beside kforge-cli";
        return std::nullopt;
    }
    char tmpl[] = "/tmp/kforge-compile-XXXXXX";
    const int fd = ::mkstemp(tmpl);
    if (fd < 0) {
        why = "cannot make a temporary file";
        return std::nullopt;
    }
    ::close(fd);
    const int rc = runProgramQuietly({python, helper, problemFile, "--device", backend, "--out", tmpl});
    nlohmann::json j;
    try {
        std::ifstream in(tmpl);
        j = nlohmann::json::parse(in);
    } catch (const std::exception &) {
        why = "python/kforge_compile_time.py exited with status " + std::to_string(rc) + " and wrote no result";
    }
    ::unlink(tmpl);
    if (j.is_null())
        return std::nullopt;
    return compileRatioOf(j, why);
}

// A time measured beforehand (--compile-times DIR): DIR/<problem file's stem>.compile.json.
std::optional<double> compileRatioFrom(const std::string &dir, const std::string &problemFile, std::string &why, bool &found)
{
    auto stem = baseName(problemFile);
    if (const auto dot = stem.rfind('.'); dot != std::string::npos)
        stem = stem.substr(0, dot);
    const auto path = dir + "/" + stem + ".compile.json";
    found = isFile(path);
    if (!found)
        return std::nullopt;
    try {
        std::ifstream in(path);
        return compileRatioOf(nlohmann::json::parse(in), why);
    } catch (const std::exception &e) {
        why = path + " is not a result of python/kforge_compile_time.py: " + e.what();
        return std::nullopt;
    }
}

// A problem whose forward is one top-level ATen call: that call is the whole problem.
bool isOneCall(const WorkloadFile &w)
{
    return std::count_if(w.calls.begin(), w.calls.end(), [](const CapturedCall &c) { return c.depth == 0; }) == 1;
}

// A problem's cards in screening order: first the family of its one top-level ATen call (a problem that
// is one call), then the cards read from its traced forward (the fused pointwise chain, a loss or norm
// found in the graph: keys ending .pointwise, .traced, .ln, .g<groups>), then views around a dimension its
// calls reduce over, then the rest as they came.
std::vector<OperatorCard> screeningOrder(const std::vector<OperatorCard> &cards, const std::vector<OperatorCard> &all, const WorkloadFile &w)
{
    std::set<std::string> direct;
    if (isOneCall(w))
        for (const auto &c : all)
            if (!isProblemCard(c) && !c.family.empty())
                direct.insert(c.family);
    auto endsWith = [](const std::string &s, const std::string &tail) {
        return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
    };
    // The dimensions the forward's calls reduce or scan over (their "dim" arguments): a family's view
    // around one of them (key .d<k>) comes before views around the others.
    std::set<std::string> dimViews;
    for (const auto &c : w.calls) {
        int rank = 0;
        for (const auto &a : c.args)
            if (a.kind == "tensor" && !a.tensors.empty()) {
                rank = int(a.tensors[0].shape.size());
                break;
            }
        for (const auto &a : c.args)
            if (c.depth == 0 && a.name == "dim" && (a.kind == "int" || a.kind == "int_list") && rank > 0)
                for (const auto &d : a.kind == "int" ? nlohmann::json::array({a.value}) : a.value)
                    if (d.is_number_integer())
                        dimViews.insert(".d" + std::to_string((d.get<int>() % rank + rank) % rank));
    }
    auto rank = [&](const OperatorCard &c) {
        if (direct.count(c.family))
            return 0;
        const auto dot = c.key.rfind('.');
        const auto last = dot == std::string::npos ? std::string() : c.key.substr(dot);
        if (endsWith(c.key, ".pointwise") || endsWith(c.key, ".traced") || last == ".ln"
            || (last.size() > 2 && last[1] == 'g' && std::all_of(last.begin() + 2, last.end(), ::isdigit)))
            return 1;
        return dimViews.count(last) ? 2 : 3;
    };
    auto out = cards;
    std::stable_sort(out.begin(), out.end(), [&](const auto &a, const auto &b) { return rank(a) < rank(b); });
    return out;
}

} // namespace

WorkloadFile writeBuiltinWorkload(WorkerPool &pool, const std::string &name, const std::map<std::string, std::string> &options,
                                  const std::string &out)
{
    const auto model = makeBuiltinModel(name, options);
    const auto stem = withoutJson(out);
    const auto pt = absolutePath(stem + ".pt");
    nlohmann::json opts = nlohmann::json::object();
    for (const auto &[k, v] : options)
        opts[k] = v;
    const auto reply = pool.request({{"type", "build_model"}, {"model", name}, {"options", opts}, {"path", pt}}, 600000);
    if (reply.value("type", std::string()) != "model_built") {
        const auto why = reply.contains("error") && reply["error"].is_string() ? reply["error"].get<std::string>() : reply.dump();
        throw Error("the worker did not build " + name + ": " + why);
    }
    WorkloadFile w;
    w.name = baseName(stem);
    w.model = {"torchscript", baseName(stem) + ".pt", model.source};
    w.seed = model.seed;
    w.inputs = model.inputs;
    saveWorkloadFile(w, out);
    w.dir = folderOf(out);
    std::printf("wrote %s (%s, %lld parameters, %.1f MiB) and %s\n", out.c_str(), model.summary().c_str(),
                (long long)reply.value("parameters", int64_t(0)), double(reply.value("bytes", int64_t(0))) / (1 << 20), pt.c_str());
    return w;
}

int modelCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kModelUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "list") {
        if (args.size() > 1)
            throw Error("'model list' takes no options");
        std::fputs(builtinModelsHelp().c_str(), stdout);
        return 0;
    }
    const auto name = args[0];
    builtinModelInfo(name); // an unknown model is named before anything else
    std::vector<std::string> words;
    std::string out, worker = defaultWorkerCommand();
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--out" || args[i] == "--worker") {
            if (i + 1 >= args.size() || args[i + 1].empty())
                throw Error("option " + args[i] + " needs a value");
            (args[i] == "--out" ? out : worker) = args[i + 1];
            ++i;
        } else {
            words.push_back(args[i]);
        }
    }
    const auto options = parseBuiltinOptions(name, words);
    makeBuiltinModel(name, options); // every option checked before a worker starts
    if (out.empty())
        throw Error("option --out WORKLOAD.json is needed: where to write the workload (the model goes beside it as .pt)");
    if (!isDir(folderOf(out)))
        throw Error("the folder of '" + out + "' does not exist");
    WorkerPool pool(PoolOptions{worker, 1});
    pool.start();
    try {
        writeBuiltinWorkload(pool, name, options, out);
    } catch (...) {
        pool.shutdown();
        throw;
    }
    pool.shutdown();
    return 0;
}

int fastpCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kFastpUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    std::vector<std::string> given;
    const auto o = parseOptions(args, 0,
                                {{"--nodes", true}, {"--backend", true}, {"--out", true}, {"--json", false}, {"--session", true},
                                 {"--top", true}, {"--samples", true}, {"--seed", true}, {"--worker", true}, {"--python", true},
                                 {"--screen-all", false}, {"--compile-times", true}},
                                &given);
    if (given.empty())
        throw Error("name a folder of imported problems or workload files (see --help)");
    const int nodes = wholeNumber(o, "--nodes", 8, 1, 100000), top = wholeNumber(o, "--top", 5, 1, 1000);
    const auto backend = o.count("--backend") ? o.at("--backend") : std::string("cpu");
    if (backend != "cpu" && backend != "cuda")
        throw Error("option --backend takes cpu or cuda, not '" + backend + "'");
    const bool screenAll = o.count("--screen-all") > 0;
    const auto compileTimes = o.count("--compile-times") ? o.at("--compile-times") : std::string();
    if (!compileTimes.empty() && !isDir(compileTimes))
        throw Error("option --compile-times names '" + compileTimes + "', which is not a folder");
    const auto stem = o.count("--out") ? o.at("--out") : std::string("fastp-report");
    if (!isDir(folderOf(stem)))
        throw Error("the folder of '" + stem + "' does not exist");
    const auto files = workloadFiles(given);
    std::vector<WorkloadFile> workloads;
    for (const auto &f : files)
        workloads.push_back(loadWorkloadFile(f)); // every file checked before a worker starts

    SearchOptions so;
    so.maxNodes = nodes;
    so.seed = uint64_t(wholeNumber(o, "--seed", 1, 0, 1 << 30));
    so.eval.benchSamples = wholeNumber(o, "--samples", so.eval.benchSamples, 1, 100000);
    SessionStore store(o.count("--session") ? o.at("--session") : stem + ".kforge");
    SessionInfo info;
    info.name = "fastp over " + std::to_string(files.size()) + " workloads";
    info.workload = files.size() == 1 ? files[0] : given[0];
    info.backend = backend;
    info.proposer = "templates";
    info.options = {{"nodes", nodes}, {"seed", so.seed}};
    const auto sessionId = store.createSession(info);

    const auto python = findTorchPython(o.count("--python") ? o.at("--python") : std::string());
    FastpRun run;
    run.backend = backend;
    run.nodes = nodes;
    if (python.empty())
        run.compileNote = "no Python with torch found (set --python or KFORGE_PYTHON)";

    auto writeReport = [&] {
        for (const auto &[path, text] : {std::pair{stem + ".json", fastpJson(run).dump(1) + "\n"}, std::pair{stem + ".md", fastpMarkdown(run)}}) {
            std::ofstream f(path);
            f << text;
            if (!f)
                throw Error("cannot write the report " + path);
        }
    };
    WorkerPool pool(PoolOptions{workerCommand(o), 1});
    pool.start();
    pool.requireBackend(backend);
    ProfileRequest pr;
    pr.device = backend;
    pr.writeSamples = false;
    const auto &lib = TemplateLibrary::builtin();
    for (size_t wi = 0; wi < workloads.size(); ++wi) {
        const auto &w = workloads[wi];
        FastpRow row;
        row.problem = w.name.empty() ? baseName(withoutJson(files[wi])) : w.name;
        row.workload = files[wi];
        std::printf("%s:\n", row.problem.c_str());
        std::vector<OperatorCard> cards, all;
        try {
            // A workload profiled before (kforge-cli profile) has its cards: searched as they are.
            all = w.cards;
            if (all.empty())
                all = profileThroughWorker(pool, w, files[wi], pr).workload.cards;
            else
                std::printf("  the %zu cards in the file (profiled before)\n", all.size());
            for (const auto &c : all)
                if (!c.family.empty() && !lib.forFamily(c.family, backend).empty() && (w.problem.empty() || isProblemCard(c)))
                    cards.push_back(c);
            if (w.problem.empty()) {
                std::stable_sort(cards.begin(), cards.end(), [](const auto &a, const auto &b) { return a.workloadMs > b.workloadMs; });
                if (int(cards.size()) > top)
                    cards.resize(size_t(top));
            }
            // A problem that is one ATen call is that call: where no family fits its whole forward (an int64
            // target, a family with its own shape symbols), the call's own family card is searched.
            if (cards.empty() && !w.problem.empty()
                && isOneCall(w))
                for (const auto &c : all)
                    if (!isProblemCard(c) && !c.family.empty() && !lib.forFamily(c.family, backend).empty())
                        cards.push_back(c);
            if (cards.empty())
                row.note = w.problem.empty() ? "no card of a template family" : "no template family fits the problem's signature";
        } catch (const Error &e) {
            row.note = e.what();
        }
        // Searches one card up to `budget` nodes (a card searched before continues: the engine resumes its
        // operator); the row keeps its best correct node.
        struct Searched {
            OperatorCard card;
            int64_t opId = 0;
            std::vector<NodeRecord> nodes;
        };
        auto search = [&](Searched &s, int budget) {
            if (!s.opId) {
                std::printf("  searching %s (%s)\n", s.card.key.c_str(), s.card.family.c_str());
                s.opId = store.addOperator(sessionId, s.card);
            }
            auto options = so;
            options.maxNodes = budget;
            TemplateProposer proposer(backend);
            NodeCollector nodesSeen;
            SearchEngine engine(store, pool, proposer, options);
            engine.run(sessionId, s.opId, s.card, &nodesSeen);
            s.nodes.insert(s.nodes.end(), nodesSeen.finished.begin(), nodesSeen.finished.end());
        };
        auto fold = [&](const Searched &s, FastpRow &into) {
            into.cardsSearched += !s.nodes.empty(); // a card the screen never reached was not searched
            for (const auto &n : s.nodes) {
                ++into.nodes;
                const bool correct = isCorrectStatus(n.status);
                into.accepted |= n.status == "accepted";
                if (correct && (!into.correct || n.speedup > into.speedupEager)) {
                    into.correct = true;
                    into.speedupEager = n.speedup;
                    into.bestCard = s.card.key;
                    into.bestTemplate = n.templateId;
                    into.bestNode = n.id;
                }
            }
        };
        auto noteIfNone = [](FastpRow &r) {
            if (!r.correct)
                r.note = "no correct candidate in " + std::to_string(r.nodes) + " nodes";
        };
        auto anyCorrect = [](const Searched &s) {
            return std::any_of(s.nodes.begin(), s.nodes.end(), [](const NodeRecord &n) { return isCorrectStatus(n.status); });
        };
        if (w.problem.empty() && !cards.empty()) {
            // A model's operators are each a row: fast_p over its hot operators.
            for (const auto &card : cards) {
                FastpRow op = row;
                op.problem = row.problem + ":" + card.key;
                Searched s{card, 0, {}};
                search(s, nodes);
                fold(s, op);
                noteIfNone(op);
                std::printf("  %s: %s\n", op.problem.c_str(), op.correct ? (std::to_string(op.speedupEager) + "x over eager").c_str() : "no correct kernel");
                run.rows.push_back(op);
            }
            writeReport();
            continue;
        }
        // A problem meets every family that fits its signature, most of which compute something else. Each
        // card's first node (its family's first template point) screens it; the budget then goes to the
        // cards shown to compute the forward, or, when none was, to those whose first node failed for
        // another reason than a wrong answer (a point that does not compile or launch at this shape).
        // Screened in order of how directly the card follows from the forward, and (unless --screen-all)
        // only until one computes it: at KernelBench's sizes an evaluation takes seconds.
        std::vector<Searched> searched;
        for (const auto &card : screeningOrder(cards, all, w))
            searched.push_back({card, 0, {}});
        if (searched.size() > 1)
            for (auto &s : searched) {
                search(s, 1);
                if (!screenAll && anyCorrect(s))
                    break;
            }
        const bool someCorrect = std::any_of(searched.begin(), searched.end(), anyCorrect);
        for (auto &s : searched) {
            const bool wrong = !s.nodes.empty() && !anyCorrect(s)
                               && std::all_of(s.nodes.begin(), s.nodes.end(), [](const NodeRecord &n) { return n.status == "incorrect"; });
            if (searched.size() == 1 || anyCorrect(s) || (!someCorrect && !wrong))
                search(s, nodes);
            fold(s, row);
        }
        if (!cards.empty())
            noteIfNone(row);
        if (!python.empty() && !w.problem.empty()) {
            std::string why;
            const auto problemFile = w.resolve(w.problem);
            if (!isFile(problemFile))
                why = "the problem file " + problemFile + " is not beside its workload";
            else {
                bool measured = false;
                if (!compileTimes.empty())
                    row.compileRatio = compileRatioFrom(compileTimes, problemFile, why, measured);
                if (!measured)
                    row.compileRatio = compileRatio(python, problemFile, backend, why);
            }
            if (!row.compileRatio) {
                run.compileNote = why;
                row.note += std::string(row.note.empty() ? "" : "; ") + "torch.compile: " + why;
            }
        }
        std::printf("  %s: %s%s\n", row.problem.c_str(), row.correct ? "correct" : "no correct kernel",
                    row.correct ? (", " + std::to_string(row.speedupEager) + "x over eager").c_str() : "");
        run.rows.push_back(row);
        writeReport(); // a run stopped midway keeps the problems it finished
    }
    pool.shutdown();
    store.setSessionStatus(sessionId, "finished");

    writeReport();
    const auto json = fastpJson(run);
    const auto md = fastpMarkdown(run);
    if (o.count("--json"))
        std::puts(json.dump(1).c_str());
    else
        std::fputs(md.c_str(), stdout);
    std::printf("wrote %s.md and %s.json\n", stem.c_str(), stem.c_str());
    return 0;
}

} // namespace kforge::cli
