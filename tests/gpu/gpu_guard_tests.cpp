// kforge-gpu-tests: the CUDA guard against adversarial kernels, through a real worker pool, on a GPU
// host without Qt. One line per case, then "N passed, M failed"; exit status 1 when any failed, 2 when
// no worker offers a cuda backend.
//
//   kforge-gpu-tests [--worker CMD] [--log verdicts.jsonl] [--only SUBSTRING]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "gpu/guard_cases.h"
#include "pool/worker_pool.h"

using namespace kforge;
using Clock = std::chrono::steady_clock;

namespace {

double secondsSince(Clock::time_point t0)
{
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string tail(const std::string &path, size_t n)
{
    const auto s = test::readText(path);
    return s.size() > n ? s.substr(s.size() - n) : s;
}

} // namespace

int main(int argc, char **argv)
{
    std::string worker = std::string("'") + KFORGE_WORKER_PATH + "'";
    std::string logPath, only;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--worker") && i + 1 < argc)
            worker = argv[++i];
        else if (!std::strcmp(argv[i], "--log") && i + 1 < argc)
            logPath = argv[++i];
        else if (!std::strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else {
            std::fprintf(stderr, "usage: %s [--worker CMD] [--log verdicts.jsonl] [--only SUBSTRING]\n", argv[0]);
            return 2;
        }
    }
    const auto logDir = std::filesystem::temp_directory_path() / ("kforge-gpu-tests-" + std::to_string(::getpid()));
    PoolOptions po(worker, 1);
    po.logDir = logDir.string();
    WorkerPool pool(po);
    std::vector<PoolEvent> events;
    std::mutex mu;
    pool.setEventSink([&](const PoolEvent &e) {
        std::lock_guard l(mu);
        events.push_back(e);
    });
    const auto t0 = Clock::now();
    try {
        pool.start();
    } catch (const std::exception &e) {
        std::printf("no CUDA device: the worker did not start: %s\n0 passed, 1 failed\n", e.what());
        return 2;
    }
    const auto hello = pool.hellos().at(0);
    bool hasCuda = false;
    for (const auto &b : hello.value("backends", nlohmann::json::array()))
        hasCuda = hasCuda || b == "cuda";
    if (!hasCuda) {
        std::printf("no CUDA device: the worker offers %s; its log: %s\n", hello.value("backends", nlohmann::json()).dump().c_str(),
                    tail((logDir / "worker-0.log").string(), 400).c_str());
        return 2;
    }
    for (const auto &d : hello["devices"])
        if (d.value("backend", "") == "cuda")
            std::printf("device: %s, %s, %d SMs, %.1f GiB, L2 %.0f MiB, copy bandwidth %.0f GB/s, NVRTC %s (worker up in %.1f s)\n",
                        d.value("name", "").c_str(), d.value("sm", "").c_str(), d.value("sms", 0),
                        d.value("memory_bytes", 0.0) / (1 << 30), d.value("l2_bytes", 0.0) / (1 << 20),
                        d.value("copy_bandwidth_gbs", 0.0), d.value("nvrtc", "").c_str(), secondsSince(t0));

    std::ofstream log;
    if (!logPath.empty())
        log.open(logPath);
    int passed = 0, failed = 0;
    auto report = [&](bool ok, const std::string &name, const std::string &what, double seconds) {
        (ok ? passed : failed)++;
        std::printf("%s  %-58s %-44s %6.2f s\n", ok ? "PASS" : "FAIL", name.c_str(), what.c_str(), seconds);
        std::fflush(stdout);
    };
    EvalOptions opts;
    opts.benchSamples = 20;
    opts.warmup = 3;

    for (const auto &c : test::guardCases()) {
        if (!only.empty() && c.name.find(only) == std::string::npos)
            continue;
        const auto card = test::caseCard(c);
        Verdict v;
        const auto start = Clock::now();
        std::string problem;
        try {
            EvalOptions o = opts;
            o.deadlineMs = c.deadlineMs;
            v = pool.evaluate(card, test::cudaKernel(c.kernel, c.dtype, c.plan), o);
            problem = test::checkVerdict(c, v);
        } catch (const std::exception &e) {
            problem = std::string("exception: ") + e.what();
        }
        const double took = secondsSince(start);
        if (log.is_open())
            log << nlohmann::json{{"case", c.name}, {"seconds", took}, {"verdict", v}}.dump() << "\n";
        std::string what = statusName(v.status) + (v.reasons.empty() ? "" : "/" + v.reasons.front().code);
        if (v.correct())
            what += " " + v.summaryLine().substr(v.summaryLine().find(':') + 1);
        report(problem.empty(), c.name, what.substr(0, 44), took);
        if (!problem.empty())
            std::printf("      %s\n", problem.c_str());
        else if (!v.correct() && !v.reasons.empty())
            std::printf("      %s\n", v.reasons.front().message.substr(0, 160).c_str());
        if (c.recovery) {
            // The worker died with the kernel; a fresh one must evaluate a good kernel within seconds.
            const auto r0 = Clock::now();
            Verdict after;
            try {
                after = pool.evaluate(test::guardCard(DType::F32), test::cudaKernel("good_softmax.cu", DType::F32), opts);
            } catch (const std::exception &e) {
                after = failureVerdict(VerdictStatus::Error, reason::BadRequest, e.what());
            }
            const double rec = secondsSince(r0);
            const bool ok = after.correct() && rec < 30.0;
            char buf[96];
            std::snprintf(buf, sizeof buf, "recovered: %s", statusName(after.status).c_str());
            report(ok, "  worker recovers after: " + c.name, buf, rec);
            if (!ok)
                std::printf("      %s\n", after.summaryLine().c_str());
        }
    }
    // The second evaluation of an identical source comes from the compile cache.
    {
        const auto start = Clock::now();
        const auto v = pool.evaluate(test::guardCard(DType::F32), test::cudaKernel("good_softmax.cu", DType::F32), opts);
        char buf[96];
        std::snprintf(buf, sizeof buf, "cached=%s compile %.1f ms", v.compile.cached ? "yes" : "no", v.compile.millis);
        report(v.compile.cached && v.correct(), "identical source hits the compile cache", buf, secondsSince(start));
    }
    // Three new sources queued together: the worker compiles the third while it evaluates the second
    // (the prepare hint, sent when the second starts), and the third's verdict says it was compiled
    // ahead. The first holds the worker while the others are queued, however fast the dispatcher is.
    if (only.empty()) {
        const auto start = Clock::now();
        std::mutex m;
        std::condition_variable cv;
        std::vector<Verdict> got(3);
        int done = 0;
        for (int i = 0; i < 3; ++i) {
            auto cand = test::cudaKernel("good_softmax.cu", DType::F32);
            cand.source = "// compiled-ahead check " + std::to_string(i) + " " + std::to_string(::getpid()) + "\n" + cand.source;
            pool.submit(test::guardCard(DType::F32), cand, opts, [&, i](Verdict v) {
                std::lock_guard lock(m);
                got[size_t(i)] = std::move(v);
                ++done;
                cv.notify_all();
            });
        }
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return done == 3; });
        char buf[120];
        std::snprintf(buf, sizeof buf, "third ahead=%s waited %.0f ms of %.0f", got[2].compile.aheadWaitMs >= 0 ? "yes" : "no",
                      got[2].compile.aheadWaitMs, got[2].compile.millis);
        report(got[0].correct() && got[1].correct() && got[2].correct() && got[2].compile.aheadWaitMs >= 0
                   && got[2].compile.aheadWaitMs < got[2].compile.millis,
               "the next queued candidate is compiled ahead", buf, secondsSince(start));
    }
    std::printf("worker restarts: %d\n", pool.restarts());
    pool.shutdown();
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
