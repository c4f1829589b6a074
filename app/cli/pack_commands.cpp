// kforge-cli export SESSION --out DIR: a session's chosen kernels as a kernel pack (core/pack), each
// compiled for the device it will run on: CPU kernels by the system compiler as the CPU backend builds
// candidates (worker/cpu/cpu_compiler.h, in its jail), CUDA kernels by NVRTC for every requested
// architecture (worker/cuda/nvrtc_compiler.h; no GPU needed).
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "pack/pack_reader.h"
#include "pack/pack_writer.h"
#include "pool/worker_pool.h"
#include "pack/selection.h"
#include "store/session_store.h"
#include "util/error.h"
#include "util/paths.h"
#include "workload/workload_file.h"
#include <unistd.h>
#ifdef KFORGE_CLI_CPU_COMPILER
#include "worker/cpu/cpu_compiler.h"
#endif
#ifdef KFORGE_CLI_NVRTC
#include "worker/cuda/nvrtc_compiler.h"
#endif

namespace kforge::cli {

namespace {

const char *kExportUsage =
    "usage: kforge-cli export SESSION --out DIR [--arch sm_90,sm_80] [--operator KEY]...\n\n"
    "Writes a kernel pack: for each operator of the session, the fastest kernel the guard accepted and no\n"
    "person rejected, or one a person accepted (kforge-cli decide). Each kernel's guards come from its\n"
    "operator card (dtypes, shape symbols with the range they were verified on, contiguity, device); its\n"
    "source, launch plan and binaries go beside manifest.json with their SHA-256. CPU kernels are compiled\n"
    "for this host's CPU; CUDA kernels with NVRTC for each --arch (default: the architecture the session\n"
    "verified them on). --operator (a card key or an ATen operator, repeatable) exports only those.\n";

std::vector<std::string> splitList(const std::string &s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    for (std::string w; std::getline(in, w, ',');)
        if (!w.empty())
            out.push_back(w);
    return out;
}

[[maybe_unused]] std::string readBytes(const std::string &path) // unused in a build with no CPU compiler
{
    std::ifstream in(path, std::ios::binary);
    std::stringstream buf;
    buf << in.rdbuf();
    if (!in)
        throw Error("cannot read " + path);
    return buf.str();
}

std::string validArch(const std::string &a)
{
    if (a.size() < 5 || a.rfind("sm_", 0) != 0 || a.find_first_not_of("0123456789a", 3) != std::string::npos)
        throw Error("option --arch takes architectures like sm_90 or sm_80,sm_90, not '" + a + "'");
    return a;
}

} // namespace

int exportCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kExportUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string sessionPath = args[0];
    std::string out;
    std::vector<std::string> archs, operators;
    for (size_t i = 1; i < args.size(); ++i) {
        const auto &a = args[i];
        if (a != "--out" && a != "--arch" && a != "--operator")
            throw Error("unknown option '" + a + "' (see --help)");
        if (i + 1 >= args.size() || args[i + 1].empty())
            throw Error("option " + a + " needs a value");
        const auto &v = args[++i];
        if (a == "--out")
            out = v;
        else if (a == "--arch")
            for (const auto &x : splitList(v))
                archs.push_back(validArch(x));
        else
            operators.push_back(v);
    }
    if (out.empty())
        throw Error("export needs --out DIR, the folder to write the pack to");

    const int version = SessionStore::fileSchemaVersion(sessionPath);
    if (version == 0)
        throw Error("'" + sessionPath + "' is empty: no kforge session has been written to it yet");
    if (version != SessionStore::currentSchemaVersion())
        throw Error("'" + sessionPath + "' is a session of schema version " + std::to_string(version) + "; open it with this kforge "
                    "(kforge-cli decide or the window) to upgrade it, then export");
    SessionStore store(sessionPath, SessionStore::Mode::ReadOnly);
    const auto sessions = store.sessions();
    if (sessions.empty())
        throw Error("'" + sessionPath + "' holds no session");
    const auto &session = sessions.back();
    const auto choices = pack::choosePackNodes(store, session.id, operators);

    pack::PackManifest manifest;
    manifest.createdBy = std::string("kforge-cli ") + KFORGE_VERSION;
    manifest.createdAt = pack::utcTimestamp();
    manifest.session = sessionPath;
    struct Pending {
        pack::PackKernel kernel;
        std::map<std::string, std::string> files; // relative path -> bytes
    };
    std::vector<Pending> pending;
    for (const auto &c : choices) {
        if (!c.node) {
            std::printf("%-36s skipped: %s\n", c.op.card.key.c_str(), c.why.c_str());
            continue;
        }
        const auto &detail = *c.node;
        Pending p;
        p.kernel = pack::kernelFromCard(c.op.card);
        p.kernel.backend = detail.candidate.backend;
        p.kernel.node = detail.node.id;
        p.kernel.speedup = detail.node.speedup;
        const auto dir = "kernels/" + std::to_string(pending.size()) + "/";
        if (p.kernel.backend == "cpu") {
#ifdef KFORGE_CLI_CPU_COMPILER
            p.files[dir + "source.cpp"] = detail.candidate.source;
            worker::CpuCompiler compiler;
            const auto build = compiler.compile(detail.candidate.source);
            if (!build.report.ok)
                throw Error("node " + std::to_string(detail.node.id) + " (" + c.op.card.key + ") did not compile for this CPU: "
                            + build.report.log);
            p.files[dir + "kernel.so"] = readBytes(build.sharedObject);
            p.kernel.binaries.push_back({"cpu", {dir + "kernel.so", {}}});
#else
            throw Error("this kforge-cli was built without the CPU compiler (the worker's kforge_sandbox): it cannot export CPU kernels");
#endif
        } else {
#ifdef KFORGE_CLI_NVRTC
            p.files[dir + "source.cu"] = detail.candidate.source;
            p.kernel.launch = detail.candidate.launch;
            auto want = archs;
            if (want.empty() && detail.verdict.compile.target.rfind("sm_", 0) == 0)
                want.push_back(detail.verdict.compile.target);
            if (want.empty())
                throw Error("node " + std::to_string(detail.node.id) + " does not say which architecture it was verified on: pass --arch");
            worker::NvrtcCompiler compiler;
            for (const auto &arch : want) {
                const auto build = compiler.compile(detail.candidate.source, arch);
                if (!build.report.ok)
                    throw Error("node " + std::to_string(detail.node.id) + " (" + c.op.card.key + ") did not compile for " + arch + ": "
                                + build.report.log);
                p.files[dir + arch + ".cubin"] = build.cubin;
                p.kernel.binaries.push_back({arch, {dir + arch + ".cubin", {}}});
            }
#else
            throw Error("this kforge-cli was built without NVRTC: it cannot export CUDA kernels");
#endif
        }
        p.kernel.source.path = dir + (p.kernel.backend == "cpu" ? "source.cpp" : "source.cu");
        std::printf("%-36s node %lld, %.2fx, %s (%s)\n", c.op.card.key.c_str(), (long long)detail.node.id, detail.node.speedup,
                    p.kernel.backend.c_str(), c.why.c_str());
        pending.push_back(std::move(p));
    }
    if (pending.empty())
        throw Error("nothing to export: no operator of " + sessionPath + " has a kernel that was accepted and not rejected");

    // Everything compiled: only now is the folder written, the manifest last.
    pack::PackWriter writer(out);
    for (auto &p : pending) {
        for (const auto &[path, bytes] : p.files) {
            const auto f = writer.add(path, bytes);
            if (path == p.kernel.source.path)
                p.kernel.source = f;
            for (auto &b : p.kernel.binaries)
                if (b.file.path == path)
                    b.file = f;
        }
        manifest.kernels.push_back(std::move(p.kernel));
    }
    writer.writeManifest(manifest);
    std::printf("wrote the pack %s: %zu kernel(s)\n", out.c_str(), manifest.kernels.size());
    return 0;
}

} // namespace kforge::cli

// kforge-cli run WORKLOAD --pack PACK --compare: the worker (the only process that runs a model) runs the
// workload's model in one process without and with the pack, interleaved, and compares the outputs.
namespace kforge::cli {

namespace {

const char *kRunUsage =
    "usage: kforge-cli run WORKLOAD.json --pack DIR --compare [--iters N] [--executor as-written|default] [--json OUT]\n"
    "                      [--worker CMD]\n\n"
    "Runs the workload's TorchScript model in a worker N times without the pack and N times with it,\n"
    "interleaved (default 10 each, after a warm-up of each; each run with the pack follows a first run\n"
    "after loading it, timed apart, in which its kernels load onto the device), compares the outputs within the guard's\n"
    "numerics, and prints each one's median time and spread, the speedup, and how many calls of each\n"
    "operator took a pack kernel or fell back, and why. --json writes the report.\n"
    "--executor as-written (the default) runs every ATen call as the model makes it, as eager PyTorch and\n"
    "the profile do; default runs TorchScript's own executor, whose fuser may merge pointwise calls.\n";

} // namespace

namespace {


} // namespace

int runCommand(const Args &args)
{
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
        std::fputs(kRunUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string path = args[0];
    std::map<std::string, std::string> o;
    for (size_t i = 1; i < args.size(); ++i) {
        const auto &a = args[i];
        if (a == "--compare") {
            o[a] = "1";
        } else if (a == "--pack" || a == "--iters" || a == "--json" || a == "--worker" || a == "--executor") {
            if (i + 1 >= args.size() || args[i + 1].empty())
                throw Error("option " + a + " needs a value");
            o[a] = args[++i];
        } else {
            throw Error("unknown option '" + a + "' (see --help)");
        }
    }
    if (!o.count("--pack") || !o.count("--compare"))
        throw Error("run needs --pack DIR and --compare (running with a pack alone is what the runtime library is for)");
    int iters = 10;
    if (o.count("--iters")) {
        const auto &t = o["--iters"];
        if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos || std::stoi(t) < 1 || std::stoi(t) > 1000)
            throw Error("option --iters takes a whole number from 1 to 1000, not '" + t + "'");
        iters = std::stoi(t);
    }
    std::string executor = "as_written";
    if (o.count("--executor")) {
        if (o["--executor"] != "as-written" && o["--executor"] != "default")
            throw Error("option --executor takes as-written or default, not '" + o["--executor"] + "'");
        executor = o["--executor"] == "default" ? "default" : "as_written";
    }
    auto w = loadWorkloadFile(path);
    if (w.model.kind != "torchscript")
        throw Error("workload " + path + " names a " + w.model.kind + " model; run --compare runs TorchScript models");
    // The pack is read here first, so a refused pack is reported before a worker starts.
    pack::readManifest(o["--pack"]);
    nlohmann::json req = {{"type", "run_pack"}, {"workload", workloadToJson(w)}, {"dir", absolutePath(w.dir)},
                          {"pack", absolutePath(o["--pack"])}, {"iters", iters}, {"executor", executor}};
    PoolOptions po;
    po.command = o.count("--worker") ? o["--worker"] : defaultWorkerCommand();
    WorkerPool pool(po);
    pool.start();
    const auto reply = pool.request(req, 600000);
    pool.shutdown();
    if (reply.value("type", std::string()) != "pack_run" || !reply.contains("report")) {
        const auto why = reply.contains("error") && reply["error"].is_string() ? reply["error"].get<std::string>() : reply.dump();
        std::fprintf(stderr, "kforge-cli run: %s did not run with the pack: %s\n", path.c_str(), why.c_str());
        return 1;
    }
    const auto &r = reply["report"];
    const auto t = [&](const char *side, const char *what) { return r.at(side).value(what, 0.0); };
    std::printf("%-10s %12s %12s %12s\n", "", "median ms", "min ms", "max ms");
    for (const char *side : {"without", "with"})
        std::printf("%-10s %12.3f %12.3f %12.3f\n", side, t(side, "median_ms"), t(side, "min_ms"), t(side, "max_ms"));
    if (r.contains("with_first_after_load"))
        std::printf("(the first run after loading the pack, which loads its kernels onto the device: median %.3f ms)\n",
                    r["with_first_after_load"].value("median_ms", 0.0));
    std::printf("speedup %.3fx over %d interleaved runs each (%s timing, %s)\n", r.value("speedup", 0.0), iters,
                r.value("clock", std::string("host")).c_str(),
                executor == "default" ? "TorchScript's default executor" : "every call as written");
    std::printf("outputs %s: %s\n", r.value("outputs_match", false) ? "match" : "DIFFER", r.value("outputs_note", std::string()).c_str());
    std::printf("%-28s %8s %10s  %s\n", "operator", "taken", "fell back", "why");
    const auto counters = r.value("counters", nlohmann::json::object());
    for (const auto &[op, c] : counters.items()) {
        std::string why;
        const auto kinds = c.value("why", nlohmann::json::object());
        for (const auto &[kind, n] : kinds.items())
            why += (why.empty() ? "" : ", ") + kind + " " + n.dump();
        std::printf("%-28s %8lld %10lld  %s\n", op.c_str(), (long long)c.value("taken", int64_t(0)), (long long)c.value("fell_back", int64_t(0)),
                    why.c_str());
    }
    if (o.count("--json")) {
        std::ofstream out(o["--json"]);
        out << r.dump(2) << "\n";
        if (!out)
            throw Error("cannot write " + o["--json"]);
    }
    return r.value("outputs_match", false) ? 0 : 1;
}

} // namespace kforge::cli
