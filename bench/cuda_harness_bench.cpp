// kforge-cuda-bench: the cuda backend's harness throughput and honesty on one GPU.
//  - evaluations per minute through the whole harness (NVRTC compile, verification, benchmark) for a
//    batch of distinct softmax kernels (template variants, each a new source so the cache never hits);
//  - the median NVRTC compile time;
//  - the copy bandwidth the worker measured (the roofline);
//  - controls: straightforward ReLU and row-sum kernels must come out within about 10% of eager ATen.
// Prints a table and writes every verdict to --json.
//
//   kforge-cuda-bench [--worker CMD] [--count N] [--json out.json] [--dump DIR] [--log-dir DIR]
//
// --dump writes each control's full source and resolved launch with the harness's numbers, for
// tools/gpu/controls_crosscheck.py to time the same kernels and eager ops independently.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <unistd.h>

#include "gpu/guard_cases.h"
#include "pool/worker_pool.h"
#include "proposers/template_library.h"
#include "util/stats.h"
#include "worker/cuda/launch_plan.h"

using namespace kforge;
using Clock = std::chrono::steady_clock;
using J = nlohmann::json;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Distinct valid points of a template's space, in a fixed shuffled order.
std::vector<J> points(const KernelTemplate &t, const OperatorCard &card, size_t want)
{
    std::vector<J> all{J::object()};
    for (const auto &[name, values] : t.space) {
        std::vector<J> next;
        for (const auto &p : all)
            for (const auto &v : values) {
                J q = p;
                q[name] = v;
                next.push_back(q);
            }
        all.swap(next);
    }
    std::vector<J> valid;
    for (const auto &p : all)
        if (!t.valid || t.valid(p, card))
            valid.push_back(p);
    std::mt19937 rng(7);
    std::shuffle(valid.begin(), valid.end(), rng);
    if (t.seed) { // the expert's point first
        const J s = t.seed(card);
        valid.erase(std::remove(valid.begin(), valid.end(), s), valid.end());
        valid.insert(valid.begin(), s);
    }
    if (valid.size() > want)
        valid.resize(want);
    return valid;
}

} // namespace

int main(int argc, char **argv)
{
    std::string worker = std::string("'") + KFORGE_WORKER_PATH + "'";
    std::string jsonPath, dumpDir, logDir;
    size_t count = 24;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--worker") && i + 1 < argc)
            worker = argv[++i];
        else if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
            jsonPath = argv[++i];
        else if (!std::strcmp(argv[i], "--log-dir") && i + 1 < argc)
            logDir = argv[++i];
        else if (!std::strcmp(argv[i], "--dump") && i + 1 < argc)
            dumpDir = argv[++i];
        else if (!std::strcmp(argv[i], "--count") && i + 1 < argc)
            count = size_t(std::max(1, std::atoi(argv[++i])));
        else {
            std::fprintf(stderr, "usage: %s [--worker CMD] [--count N] [--json out.json] [--dump DIR] [--log-dir DIR]\n", argv[0]);
            return 2;
        }
    }
    // A fresh compile cache, so every variant is compiled: the throughput includes NVRTC.
    const auto cache = std::filesystem::temp_directory_path() / ("kforge-bench-cache-" + std::to_string(::getpid()));
    std::filesystem::create_directories(cache);
    ::setenv("KFORGE_CACHE_DIR", cache.c_str(), 1);
    ::setenv("KFORGE_WORKER_VERBOSE", "1", 1); // per-evaluation phase times in the worker's log

    PoolOptions po(worker, 1);
    po.logDir = logDir; // kept, with the worker's per-evaluation phase times, when given
    WorkerPool pool(po);
    const auto t0 = Clock::now();
    pool.start();
    const double startup = secondsSince(t0);
    J device;
    for (const auto &d : pool.hellos().at(0).value("devices", J::array()))
        if (d.value("backend", "") == "cuda")
            device = d;
    if (device.is_null()) {
        std::printf("no CUDA device: the worker has no cuda backend\n");
        return 2;
    }
    J out = {{"device", device}, {"worker_startup_s", startup}};

    // 1. Throughput over distinct softmax variants.
    const auto card = makeSoftmaxCard(4096, 4096, DType::F32);
    const auto *tmpl = TemplateLibrary::builtin().find("cuda.softmax.rows");
    if (!tmpl) {
        std::printf("the template cuda.softmax.rows is missing\n");
        return 2;
    }
    const auto pts = points(*tmpl, card, count);
    EvalOptions opts; // defaults: 30 samples, 3 warm-up runs
    std::vector<double> compileMs, evalS;
    int correct = 0, accepted = 0, compiled = 0;
    double bestSpeedup = 0;
    J variants = J::array();
    // All queued at once, as a search keeps them: the worker compiles the next while it evaluates one.
    std::vector<Verdict> verdicts(pts.size());
    std::vector<double> doneAt(pts.size());
    std::mutex mutex;
    std::condition_variable cv;
    size_t finished = 0;
    const auto batch0 = Clock::now();
    for (size_t i = 0; i < pts.size(); ++i) {
        Candidate c;
        c.backend = "cuda";
        c.source = "// harness bench variant " + std::to_string(i) + " " + pts[i].dump() + "\n" + tmpl->render(pts[i], card);
        c.launch = tmpl->launch(pts[i], card);
        pool.submit(card, c, opts, [&, i](Verdict v) {
            std::lock_guard lock(mutex);
            verdicts[i] = std::move(v);
            doneAt[i] = secondsSince(batch0);
            ++finished;
            cv.notify_all();
        });
    }
    {
        std::unique_lock lock(mutex);
        cv.wait(lock, [&] { return finished == pts.size(); });
    }
    double previous = 0;
    for (size_t i = 0; i < pts.size(); ++i) {
        const Verdict &v = verdicts[i];
        evalS.push_back(doneAt[i] - previous); // one worker serves the queue in order
        previous = doneAt[i];
        if (v.compile.ok) {
            ++compiled;
            if (!v.compile.cached)
                compileMs.push_back(v.compile.millis);
        }
        correct += v.correct();
        accepted += v.status == VerdictStatus::Accepted;
        if (v.correct())
            bestSpeedup = std::max(bestSpeedup, v.speedup);
        std::printf("  %2zu %-58s %-12s %6.0f ms compile%s, %5.2fx  %s\n", i, pts[i].dump().c_str(), statusName(v.status).c_str(),
                    v.compile.millis, v.compile.aheadWaitMs >= 0 ? " ahead" : "", v.speedup,
                    v.correct() ? "" : (v.reasons.empty() ? "" : v.reasons.front().message.substr(0, 80).c_str()));
        variants.push_back({{"params", pts[i]}, {"seconds", evalS.back()}, {"verdict", v}});
    }
    const double batchS = secondsSince(batch0);
    const double perMin = double(pts.size()) / batchS * 60.0;
    const double medCompile = compileMs.empty() ? 0.0 : quantile(compileMs, 0.5);
    out["throughput"] = {{"evaluations", pts.size()}, {"seconds", batchS}, {"per_minute", perMin},
                         {"median_compile_ms", medCompile}, {"median_eval_s", quantile(evalS, 0.5)},
                         {"compiled", compiled}, {"correct", correct}, {"accepted", accepted}, {"best_speedup", bestSpeedup}};
    out["variants"] = variants;

    // The same kernels again with the long warm-up forced, each variant timed alone as before compiling
    // ahead: the short warm-up a busy device gets must not move a timing beyond its noise.
    std::string warmupLine;
    {
        ::setenv("KFORGE_CUDA_WARMUP_MS", "100", 1);
        WorkerPool again(PoolOptions(worker, 1));
        again.start();
        std::vector<double> dc, db, ds;
        for (size_t i = 0; i < pts.size(); ++i) {
            const Verdict &first = verdicts[i];
            if (!first.correct())
                continue;
            Candidate c;
            c.backend = "cuda";
            c.source = "// harness bench variant " + std::to_string(i) + " " + pts[i].dump() + "\n" + tmpl->render(pts[i], card);
            c.launch = tmpl->launch(pts[i], card);
            const Verdict v = again.evaluate(card, c, opts);
            if (!v.correct())
                continue;
            dc.push_back(std::abs(first.candidate.summary.median / v.candidate.summary.median - 1) * 100);
            db.push_back(std::abs(first.baseline.summary.median / v.baseline.summary.median - 1) * 100);
            ds.push_back(std::abs(first.speedup / v.speedup - 1) * 100);
        }
        again.shutdown();
        ::unsetenv("KFORGE_CUDA_WARMUP_MS");
        if (!dc.empty()) {
            char buf[320];
            std::snprintf(buf, sizeof buf,
                          "same %zu kernels with the 100 ms warm-up forced: candidate medians differ by %.2f%% (median; max %.2f%%), "
                          "baseline by %.2f%% (max %.2f%%), speedups by %.2f%% (max %.2f%%)",
                          dc.size(), quantile(dc, 0.5), *std::max_element(dc.begin(), dc.end()), quantile(db, 0.5),
                          *std::max_element(db.begin(), db.end()), quantile(ds, 0.5), *std::max_element(ds.begin(), ds.end()));
            warmupLine = buf;
            out["warmup_check"] = {{"kernels", dc.size()}, {"candidate_pct_median", quantile(dc, 0.5)}, {"baseline_pct_median", quantile(db, 0.5)},
                                   {"speedup_pct_median", quantile(ds, 0.5)}, {"speedup_pct_max", *std::max_element(ds.begin(), ds.end())}};
        }
    }

    // 2. Controls: must land within about 10% of eager.
    struct Control {
        const char *name;
        OperatorCard card;
        const char *kernel;
    };
    const std::vector<Control> controls = {
        {"relu 8192x8192 fp32", makeCard("relu", {{"rows", 8192}, {"cols", 8192}}, DType::F32), "control_relu.cu"},
        {"sum(-1) 8192x8192 fp32", makeCard("sum", {{"rows", 8192}, {"cols", 8192}}, DType::F32), "control_sum.cu"},
        {"relu 1024x1024 fp32 (graph-timed)", makeCard("relu", {{"rows", 1024}, {"cols", 1024}}, DType::F32), "control_relu.cu"},
    };
    J ctl = J::array();
    std::vector<std::string> ctlLines;
    for (const auto &c : controls) {
        EvalOptions o;
        o.benchSamples = 60;
        const auto cand = test::cudaKernel(c.kernel, DType::F32);
        const Verdict v = pool.evaluate(c.card, cand, o);
        if (!dumpDir.empty()) {
            std::filesystem::create_directories(dumpDir);
            const auto rp = worker::resolveLaunchPlan(worker::parseLaunchPlan(cand.launch, c.card), c.card.shape);
            const auto &k = rp.kernels.at(0);
            const std::string stem = dumpDir + "/control-" + std::to_string(ctl.size());
            std::ofstream(stem + ".cu") << cand.source;
            std::ofstream(stem + ".json") << J{{"name", c.name}, {"family", c.card.family}, {"shape", c.card.shape}, {"kernel", k.name},
                                               {"grid", k.grid}, {"block", k.block}, {"source", stem + ".cu"},
                                               {"harness_kernel_us", v.candidate.summary.median},
                                               {"harness_eager_us", v.baseline.summary.median}}
                                                 .dump();
        }
        const bool within = v.correct() && v.speedup > 0.9 && v.speedup < 1.1;
        const double gbs = v.candidate.summary.median > 0 ? c.card.minBytes(c.card.shape) / v.candidate.summary.median / 1e3 : 0;
        char buf[240];
        std::snprintf(buf, sizeof buf, "| %-34s | %8.1f | %8.1f | %6.3fx | %5.1f%% | %6.0f GB/s | %8.1f | %-13s | %s |", c.name,
                      v.candidate.summary.median, v.baseline.summary.median, v.speedup, v.noise * 100, gbs, v.rooflineUs,
                      statusName(v.status).c_str(), within ? "yes" : "NO");
        ctlLines.push_back(buf);
        ctl.push_back({{"name", c.name}, {"within_10pct", within}, {"achieved_gbs", gbs}, {"verdict", v}});
        if (!v.correct())
            std::printf("  control %s: %s\n", c.name, v.summaryLine().c_str());
    }
    out["controls"] = ctl;
    pool.shutdown();

    std::printf("\n## CUDA harness benchmark\n");
    std::printf("device: %s (%s, %d SMs, L2 %.0f MiB), NVRTC %s; worker start %.1f s\n", device.value("name", "").c_str(),
                device.value("sm", "").c_str(), device.value("sms", 0), device.value("l2_bytes", 0.0) / (1 << 20),
                device.value("nvrtc", "").c_str(), startup);
    std::printf("measured copy bandwidth (read + write): %.0f GB/s; streaming reads: %.0f GB/s\n", device.value("copy_bandwidth_gbs", 0.0),
                device.value("read_bandwidth_gbs", 0.0));
    std::printf("throughput: %zu distinct softmax 4096x4096 fp32 variants in %.1f s = %.1f evaluations/min (target >= 130)\n", pts.size(),
                batchS, perMin);
    std::printf("median NVRTC compile: %.0f ms (target <= 300); median evaluation %.2f s; compiled %d, correct %d, accepted %d, best %.2fx\n",
                medCompile, quantile(evalS, 0.5), compiled, correct, accepted, bestSpeedup);
    if (!warmupLine.empty())
        std::printf("%s\n", warmupLine.c_str());
    std::printf("\n| control | kernel us | eager us | speedup | noise | kernel BW | floor us | status | within 10%% |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    for (const auto &l : ctlLines)
        std::printf("%s\n", l.c_str());
    if (!jsonPath.empty())
        std::ofstream(jsonPath) << out.dump(1) << "\n";
    std::error_code ec;
    std::filesystem::remove_all(cache, ec);
    return 0;
}
