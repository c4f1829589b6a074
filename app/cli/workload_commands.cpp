// kforge-cli profile WORKLOAD and kforge-cli import DIR: real models in. Profiling runs in a worker (the
// only process that runs a model); importing a KernelBench-style problem runs python/kforge_capture.py
// with a Python that has torch.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "app/cli/commands.h"
#include "app/cli/workload_profile.h"
#include "pool/worker_pool.h"
#include "util/error.h"
#include "util/options.h"
#include "util/paths.h"
#include "pack/pack_reader.h"
#include "workload/builtin_models.h"
#include "workload/profile_compare.h"
#include "workload/workload_file.h"

namespace kforge::cli {

namespace {

const char *kProfileUsage =
    "usage: kforge-cli profile WORKLOAD.json [--trace OUT.json] [--runs N] [--warmup N] [--device cpu|cuda|auto] [--no-write]\n"
    "                          [--worker CMD] [--pack DIR [--out PROFILE.json]]\n"
    "       kforge-cli profile builtin:NAME [--OPTION=VALUE...] [--out WORKLOAD.json] [the options above]\n\n"
    "Runs the workload's TorchScript model in a worker with every ATen call recorded (schema, shapes,\n"
    "dtypes, strides, scalars; CPU time, or GPU time from device events on --device cuda, which auto picks\n"
    "where the worker has a GPU), groups the calls into operator cards by call pattern and prints\n"
    "them ranked by their share of the runtime. The calls, the cards and the calls that have no card (and\n"
    "why) are written back into WORKLOAD.json, with a sample of each card's real inputs beside it\n"
    "(WORKLOAD.samples.pt). A workload imported from a Python problem already has its calls: only its cards\n"
    "are made; a problem's TorchScript also gets problem cards, its whole forward offered to every template\n"
    "family that fits. --trace writes the timeline as a Chrome trace (Perfetto and chrome://tracing open it).\n"
    "builtin:NAME first writes a built-in model (see kforge-cli model list) as NAME.json and NAME.pt, or --out.\n"
    "--pack DIR profiles the model with the pack's kernels registered instead: WORKLOAD.json is left as it is,\n"
    "the calls go to --out (default WORKLOAD.with-pack.json), and a table compares each call pattern's time\n"
    "with the workload's own profile, the operators whose calls took the pack's kernels first.\n\n"
    "(kforge-cli profile --session FILE --node N profiles a CUDA node with Nsight Compute.)\n";

const char *kImportUsage =
    "usage: kforge-cli import DIR [--out DIR] [--python PYTHON] [--jobs N]\n\n"
    "Imports every KernelBench-style problem in DIR (a .py file defining Model, get_inputs and\n"
    "get_init_inputs) as a workload: python/kforge_capture.py builds the model, records every ATen call of\n"
    "one run, and traces it to TorchScript where it traces. Writes NAME.json (and NAME.pt, NAME.inputs.pt)\n"
    "into --out (default: DIR). Needs a Python with torch: --python, else $KFORGE_PYTHON, else python3.\n"
    "A problem runs on CUDA when that torch sees a GPU. --jobs N imports N problems at a time (default 1;\n"
    "each holds its tensors on the device while it runs).\n"
    "Exit status 1 when a problem failed to import, 2 when no Python with torch is found.\n";


// Runs argv and waits; stdout and stderr pass through. Returns the exit status (127: not started).
int runProgram(const std::vector<std::string> &argv, bool quiet = false)
{
    const pid_t pid = ::fork();
    if (pid < 0)
        return 127;
    if (pid == 0) {
        if (quiet) {
            std::FILE *null = std::fopen("/dev/null", "w");
            if (null) {
                ::dup2(::fileno(null), 1);
                ::dup2(::fileno(null), 2);
            }
        }
        std::vector<char *> args;
        for (const auto &a : argv)
            args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::_Exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string captureHelper()
{
    if (const char *env = std::getenv("KFORGE_CAPTURE_HELPER"))
        return env;
    for (const auto &p : {executableDir() + "/../share/kforge/python/kforge_capture.py",
#ifdef KFORGE_SOURCE_PYTHON_DIR
                          std::string(KFORGE_SOURCE_PYTHON_DIR) + "/kforge_capture.py",
#endif
                          executableDir() + "/../../../python/kforge_capture.py"})
        if (isFile(p))
            return p;
    throw Error("python/kforge_capture.py is not installed beside kforge-cli (set KFORGE_CAPTURE_HELPER to its path)");
}

} // namespace

ProfiledWorkload profileThroughWorker(WorkerPool &pool, const WorkloadFile &w, const std::string &path, const ProfileRequest &r)
{
    const bool callsOnly = w.model.kind != "torchscript";
    if (callsOnly && w.calls.empty())
        throw Error("workload " + path + " names a " + w.model.kind + " model and has no captured calls: import it with "
                    "kforge-cli import (or python/kforge_capture.py problem) first");
    const auto dir = absolutePath(w.dir.empty() ? "." : w.dir);
    const std::string stem = withoutJson(path);
    nlohmann::json req = {{"type", "profile_workload"}, {"workload", workloadToJson(w)}, {"dir", dir}, {"runs", r.runs},
                          {"warmup", r.warmup}, {"calls_only", callsOnly}, {"device", r.device},
                          {"problem", !w.problem.empty() && !callsOnly}};
    if (r.writeSamples && r.pack.empty())
        req["samples_path"] = absolutePath(stem + ".samples.pt");
    if (!r.pack.empty())
        req["pack"] = absolutePath(r.pack);
    const auto t0 = std::chrono::steady_clock::now();
    const auto reply = pool.request(req, 600000);
    if (reply.value("type", std::string()) != "workload_profile" || !reply.contains("workload")) {
        const auto why = reply.contains("error") && reply["error"].is_string() ? reply["error"].get<std::string>() : reply.dump();
        throw Error(path + " was not profiled: " + why);
    }
    ProfiledWorkload out;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.device = reply.value("device", std::string("cpu"));
    out.timing = reply.value("timing", std::string("host clock"));
    out.workload = parseWorkload(reply["workload"], "the worker's profile of " + path);
    out.workload.dir = w.dir;
    out.workload.name = w.name;
    out.workload.problem = w.problem;
    out.pack = reply.value("pack", nlohmann::json());
    // Sample files are written as absolute paths on the worker; keep them relative when they sit beside the workload.
    for (auto &[key, s] : out.workload.samples)
        if (s.file.rfind(dir + "/", 0) == 0)
            s.file = s.file.substr(dir.size() + 1);
    return out;
}

int runProgramQuietly(const std::vector<std::string> &argv)
{
    return runProgram(argv, true);
}

// A Python that imports torch: the one given, else $KFORGE_PYTHON, else python3 and /usr/bin/python3.
std::string findTorchPython(const std::string &given)
{
    std::vector<std::string> tries;
    if (!given.empty())
        tries.push_back(given);
    else if (const char *env = std::getenv("KFORGE_PYTHON"))
        tries.push_back(env);
    else
        tries = {"python3", "/usr/bin/python3"};
    for (const auto &py : tries)
        if (runProgram({py, "-c", "import torch"}, true) == 0)
            return py;
    return {};
}

namespace {

std::string withPackPath(const std::string &workloadPath)
{
    return withoutJson(workloadPath) + ".with-pack.json";
}

void writeTrace(const WorkloadFile &w, const std::string &path)
{
    std::ofstream out(path);
    out << chromeTrace(w.calls, "kforge workload " + w.name).dump() << "\n";
    if (!out)
        throw Error("cannot write the trace " + path);
    std::printf("wrote the Chrome trace %s\n", path.c_str());
}

// The profile with the pack beside the workload's own: which patterns the pack changed, and by how much.
int reportPackProfile(const WorkloadFile &before, const ProfiledWorkload &result, const std::string &path, const std::string &out,
                      std::map<std::string, std::string> &o)
{
    std::set<std::string> taken;
    const auto counters = result.pack.value("counters", nlohmann::json::object());
    for (const auto &[op, c] : counters.items())
        if (c.value("taken", int64_t(0)) > 0)
            taken.insert(op);
    std::printf("pack: %s\n", result.pack.value("summary", std::string()).c_str());
    if (before.calls.empty())
        std::printf("%s has no profile of its own yet (kforge-cli profile %s): every pattern shows as new\n", path.c_str(), path.c_str());
    std::fputs(comparisonTable(compareProfiles(before, result.workload, taken)).c_str(), stdout);
    for (const auto &[op, c] : counters.items())
        std::printf("%s: %lld calls took the pack's kernel, %lld fell back\n", op.c_str(), (long long)c.value("taken", int64_t(0)),
                    (long long)c.value("fell_back", int64_t(0)));
    saveWorkloadFile(result.workload, out);
    std::printf("wrote %s\n", out.c_str());
    if (o.count("--trace"))
        writeTrace(result.workload, o["--trace"]);
    return 0;
}

} // namespace

int profileWorkloadCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kProfileUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    std::string path = args[0];
    const bool builtin = path.rfind("builtin:", 0) == 0;
    const std::string modelName = builtin ? path.substr(8) : std::string();
    std::map<std::string, std::string> o;
    std::vector<std::string> modelWords;
    const bool hasPack = std::find(args.begin(), args.end(), "--pack") != args.end();
    if (builtin && hasPack)
        throw Error("--pack profiles a workload that was profiled before: give its WORKLOAD.json, not builtin:NAME");
    for (size_t i = 1; i < args.size(); ++i) {
        const auto &a = args[i];
        if (builtin && a.rfind("--", 0) == 0 && a.find('=') != std::string::npos) {
            modelWords.push_back(a); // --OPTION=VALUE of the built-in model
        } else if ((builtin || hasPack) && a == "--out") {
            if (i + 1 >= args.size() || args[i + 1].empty())
                throw Error("option --out needs a value");
            o[a] = args[++i];
        } else if (a == "--no-write") {
            o[a] = "1";
        } else if (a == "--trace" || a == "--runs" || a == "--warmup" || a == "--worker" || a == "--device" || a == "--pack") {
            if (i + 1 >= args.size() || args[i + 1].empty())
                throw Error("option " + a + " needs a value");
            o[a] = args[++i];
        } else {
            throw Error("unknown option '" + a + "' (see --help)");
        }
    }
    const auto count = [&](const char *k, int def) {
        if (!o.count(k))
            return def;
        const auto &t = o[k];
        if (t.empty() || t.size() > 3 || t.find_first_not_of("0123456789") != std::string::npos || std::stoi(t) > 100)
            throw Error(std::string("option ") + k + " takes a whole number from 0 to 100, not '" + t + "'");
        return std::stoi(t);
    };
    ProfileRequest pr;
    pr.runs = std::max(1, count("--runs", 1));
    pr.warmup = count("--warmup", 1);
    pr.writeSamples = !o.count("--no-write");
    if (hasPack) {
        pr.pack = o["--pack"];
        pack::readManifest(pr.pack); // a refused pack is reported before a worker starts
    }
    if (o.count("--device")) {
        pr.device = o["--device"];
        if (pr.device != "cpu" && pr.device != "cuda" && pr.device != "auto")
            throw Error("option --device takes cpu, cuda or auto, not '" + pr.device + "'");
    }
    std::map<std::string, std::string> modelOptions;
    if (builtin) {
        modelOptions = parseBuiltinOptions(modelName, modelWords);
        makeBuiltinModel(modelName, modelOptions); // every option checked before a worker starts
        path = o.count("--out") ? o["--out"] : modelName + ".json";
    }
    PoolOptions po;
    po.command = o.count("--worker") ? o["--worker"] : defaultWorkerCommand();
    WorkerPool pool(po);
    pool.start();
    ProfiledWorkload result;
    WorkloadFile before;
    try {
        before = builtin ? writeBuiltinWorkload(pool, modelName, modelOptions, path) : loadWorkloadFile(path);
        result = profileThroughWorker(pool, before, path, pr);
    } catch (const Error &e) {
        pool.shutdown();
        std::fprintf(stderr, "kforge-cli profile: %s\n", e.what());
        return 1;
    }
    pool.shutdown();
    const auto &profiled = result.workload;
    std::printf("profiled on %s (%s) in %.1f s\n", result.device.c_str(), result.timing.c_str(), result.seconds);
    if (hasPack)
        return reportPackProfile(before, result, path, o.count("--out") ? o["--out"] : withPackPath(path), o);
    const auto groups = groupCalls(profiled.calls);
    std::fputs(rankedTable(profiled, groups).c_str(), stdout);
    std::printf("%zu operator cards", profiled.cards.size());
    std::string sep = ": ";
    for (const auto &c : profiled.cards) {
        std::printf("%s%s (%s%s)", sep.c_str(), c.key.c_str(), c.atenOp.c_str(), c.family.empty() ? "" : (", family " + c.family).c_str());
        sep = ", ";
    }
    std::printf("\n");
    for (const auto &s : profiled.skipped)
        std::printf("no card for %s: %s\n", s.op.c_str(), s.why.c_str());
    if (!o.count("--no-write")) {
        saveWorkloadFile(profiled, path);
        std::printf("wrote %s\n", path.c_str());
    }
    if (o.count("--trace"))
        writeTrace(profiled, o["--trace"]);
    return 0;
}

int importCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kImportUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string dir = args[0];
    std::string outDir = dir, python, jobsText = "1";
    for (size_t i = 1; i < args.size(); ++i) {
        if ((args[i] == "--out" || args[i] == "--python" || args[i] == "--jobs") && i + 1 < args.size() && !args[i + 1].empty())
            (args[i] == "--out" ? outDir : args[i] == "--python" ? python : jobsText) = args[i + 1], ++i;
        else
            throw Error("unknown option or missing value '" + args[i] + "' (see --help)");
    }
    const int jobs = wholeNumber({{"--jobs", jobsText}}, "--jobs", 1, 1, 64);
    if (!isDir(dir))
        throw Error("'" + dir + "' is not a folder of problem files");
    if (!isDir(outDir))
        throw Error("the output folder '" + outDir + "' does not exist");
    const auto py = findTorchPython(python);
    if (py.empty()) {
        std::fprintf(stderr, "kforge-cli import: no Python with torch found (tried %s); install python3-torch "
                             "(packaging/install-deps.sh does) or name one with --python or KFORGE_PYTHON\n",
                     python.empty() ? (std::getenv("KFORGE_PYTHON") ? "$KFORGE_PYTHON" : "python3, /usr/bin/python3") : python.c_str());
        return 2;
    }
    const auto helper = captureHelper();
    std::vector<std::string> files;
    if (DIR *d = ::opendir(dir.c_str())) {
        while (const dirent *e = ::readdir(d)) {
            const std::string name = e->d_name;
            if (name.size() > 3 && name.compare(name.size() - 3, 3, ".py") == 0 && name[0] != '_')
                files.push_back(name);
        }
        ::closedir(d);
    }
    std::sort(files.begin(), files.end());
    if (files.empty())
        throw Error("'" + dir + "' holds no .py problem files");
    std::atomic<int> failed{0};
    std::atomic<size_t> next{0};
    std::mutex print;
    auto importSome = [&] {
        for (size_t i; (i = next++) < files.size();) {
            const auto &f = files[i];
            const auto out = outDir + "/" + f.substr(0, f.size() - 3) + ".json";
            const int rc = runProgram({py, helper, "problem", dir + "/" + f, "--out", out});
            std::lock_guard<std::mutex> lock(print);
            std::printf("%s %s%s\n", rc == 0 ? "imported" : "FAILED  ", f.c_str(), rc == 0 ? (" -> " + out).c_str() : "");
            std::fflush(stdout);
            failed += rc != 0;
        }
    };
    std::vector<std::thread> workers;
    for (int j = 1; j < std::min<int>(jobs, int(files.size())); ++j)
        workers.emplace_back(importSome);
    importSome();
    for (auto &t : workers)
        t.join();
    std::printf("%zu problems, %d failed\n", files.size(), failed.load());
    return failed ? 1 : 0;
}

} // namespace kforge::cli
