// What the CPU sandbox costs one evaluation: the jail's start (bwrap, the runner, its limits and
// seccomp filter, loading the candidate), its first call and its teardown, against loading the same
// object into this process and calling it once; then the steady per-call cost (the round trip beyond
// the runner's own time); then the sandboxed compile against the same compiler run plainly.
// A plain program (no Qt, no torch). Usage: kforge-sandbox-bench [repeats]   (default 30)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "protocol/cpu_abi.h"
#include "worker/cpu/cpu_compiler.h"
#include "worker/sandbox/jail.h"

using namespace kforge;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kRows = 128, kCols = 1024;

double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double pct(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[size_t(q * double(v.size() - 1) + 0.5)];
}

struct KfTensor {
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t sizes[8];
    int64_t strides[8];
};

sandbox::wire::Tensor tensorAt(uint64_t offset)
{
    sandbox::wire::Tensor t{};
    t.offset = offset;
    t.bytes = uint64_t(kRows * kCols * 4);
    t.ndim = 2;
    t.sizes[0] = kRows;
    t.sizes[1] = kCols;
    t.strides[0] = kCols;
    t.strides[1] = 1;
    return t;
}

// The kforge_symbol an object loaded into this process resolves (the worker used to export it).
} // namespace

extern "C" int64_t kforge_symbol(const char *) { return -1; }

int main(int argc, char **argv)
{
    const int repeats = argc > 1 ? std::max(3, std::atoi(argv[1])) : 30;
    std::ifstream src(KFORGE_TEST_KERNELS "/cpu/good_softmax.cpp");
    const std::string source((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
    if (source.empty()) {
        std::fprintf(stderr, "cannot read good_softmax.cpp\n");
        return 1;
    }
    worker::CpuCompiler compiler;
    const auto build = compiler.compile(source);
    if (!build.report.ok) {
        std::fprintf(stderr, "compile failed:\n%s\n", build.report.log.c_str());
        return 1;
    }
    std::string error;
    auto arena = sandbox::Arena::create(int64_t(2) * kRows * kCols * 4, &error);
    if (!arena) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    auto *x = reinterpret_cast<float *>(arena->base());
    for (int64_t i = 0; i < kRows * kCols; ++i)
        x[i] = float(std::sin(double(i)));

    // 1. One evaluation's fixed cost: jail start + first call + teardown, against dlopen + first call.
    std::vector<double> jailed, startOnly, inProcess, firstCallMicros;
    for (int r = 0; r < repeats; ++r) {
        const auto t0 = Clock::now();
        sandbox::JailOptions o;
        o.sharedObject = build.sharedObject;
        auto started = sandbox::Jail::start(o, *arena);
        if (!started.jail) {
            std::fprintf(stderr, "the jail did not start: %s\n", started.detail.c_str());
            return 1;
        }
        startOnly.push_back(started.jail->startMillis());
        const auto c = started.jail->call({tensorAt(0)}, {tensorAt(uint64_t(kRows * kCols * 4))}, {}, 10000);
        if (!c.ok()) {
            std::fprintf(stderr, "the call failed: %s\n", c.detail.c_str());
            return 1;
        }
        firstCallMicros.push_back(c.micros);
        started.jail.reset();
        jailed.push_back(msSince(t0));

        // The unconfined way, a fresh copy each time so the loader really loads it.
        const std::string copy = (fs::temp_directory_path() / ("kforge-bench-" + std::to_string(::getpid()) + "-" + std::to_string(r) + ".so")).string();
        fs::copy_file(build.sharedObject, copy, fs::copy_options::overwrite_existing);
        const auto t1 = Clock::now();
        void *lib = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
        auto entry = lib ? reinterpret_cast<int (*)(const KfTensor *, int, KfTensor *, int)>(::dlsym(lib, "kforge_entry")) : nullptr;
        if (!entry) {
            std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
            return 1;
        }
        KfTensor in{x, 0, 2, {kRows, kCols}, {kCols, 1}}, out{x + kRows * kCols, 0, 2, {kRows, kCols}, {kCols, 1}};
        entry(&in, 1, &out, 1);
        ::dlclose(lib);
        inProcess.push_back(msSince(t1));
        fs::remove(copy);
    }

    // 2. Steady state: the round trip beyond the runner's own time, per call.
    std::vector<double> perCall;
    {
        sandbox::JailOptions o;
        o.sharedObject = build.sharedObject;
        auto started = sandbox::Jail::start(o, *arena);
        for (int i = 0; i < 20 * repeats && started.jail; ++i) {
            const auto c = started.jail->call({tensorAt(0)}, {tensorAt(uint64_t(kRows * kCols * 4))}, {}, 10000);
            if (c.ok() && i >= 5)
                perCall.push_back(c.workerMicros - c.micros);
        }
    }

    // 3. The compile: the sandboxed compiler (cache bypassed by a unique comment) against the same
    // command run plainly.
    std::vector<double> sandboxedCompile, plainCompile;
    const int compiles = std::max(3, repeats / 6);
    for (int r = 0; r < compiles; ++r) {
        const std::string unique = source + "\n// bench " + std::to_string(::getpid()) + " " + std::to_string(r) + " " +
                                   std::to_string(Clock::now().time_since_epoch().count()) + "\n";
        const auto t0 = Clock::now();
        const auto b = compiler.compile(unique);
        sandboxedCompile.push_back(msSince(t0));
        if (b.report.ok) {
            fs::remove(b.sharedObject);
            fs::remove(fs::path(b.sharedObject).replace_extension(".sha256"));
            fs::remove(fs::path(b.sharedObject).replace_extension(".log"));
        }
        const fs::path dir = fs::temp_directory_path() / ("kforge-bench-cc-" + std::to_string(::getpid()));
        fs::create_directories(dir);
        {
            std::ofstream out(dir / "candidate.cpp");
            out << kCpuAbiPreamble << unique << "// plain\n";
        }
        // runCaptured gives its command an empty environment; the compiler needs PATH to find ld.
        std::vector<std::string> args = {"/usr/bin/env", "PATH=/usr/bin:/bin", b.report.target.substr(0, b.report.target.find(' '))};
        std::istringstream words(compiler.flags());
        for (std::string w; words >> w;)
            args.push_back(w);
        args.insert(args.end(), {"-o", (dir / "candidate.so").string(), (dir / "candidate.cpp").string()});
        const auto t1 = Clock::now();
        const auto plain = sandbox::runCaptured(args, 120000, 1 << 16, 0);
        plainCompile.push_back(msSince(t1));
        if (!plain.started || !WIFEXITED(plain.waitStatus) || WEXITSTATUS(plain.waitStatus) != 0)
            std::fprintf(stderr, "plain compile failed: %s\n", plain.output.c_str());
        fs::remove_all(dir);
    }

    const double overheadMedian = pct(jailed, 0.5) - pct(inProcess, 0.5);
    const double overheadP90 = pct(jailed, 0.9) - pct(inProcess, 0.5);
    std::printf("softmax %lldx%lld float32 (tests/kernels/cpu/good_softmax.cpp), %d repeats\n", (long long)kRows, (long long)kCols, repeats);
    std::printf("jail start to Ready (bwrap, runner, limits, seccomp, dlopen): median %.2f ms, p90 %.2f ms, max %.2f ms\n",
                pct(startOnly, 0.5), pct(startOnly, 0.9), pct(startOnly, 1.0));
    std::printf("jail start + first call + teardown:   median %.2f ms, p90 %.2f ms, max %.2f ms\n", pct(jailed, 0.5),
                pct(jailed, 0.9), pct(jailed, 1.0));
    std::printf("in-process dlopen + first call:       median %.2f ms (first call itself %.1f us in the jail)\n", pct(inProcess, 0.5),
                pct(firstCallMicros, 0.5));
    std::printf("sandbox overhead per evaluation:      median %.2f ms, p90 %.2f ms (target: at most 50 ms)\n", overheadMedian, overheadP90);
    std::printf("per call, round trip beyond the runner's time: median %.1f us, p90 %.1f us (%zu calls)\n", pct(perCall, 0.5),
                pct(perCall, 0.9), perCall.size());
    std::printf("compile: sandboxed median %.1f ms, plain median %.1f ms, difference %.1f ms (%d compiles each)\n",
                pct(sandboxedCompile, 0.5), pct(plainCompile, 0.5), pct(sandboxedCompile, 0.5) - pct(plainCompile, 0.5),
                compiles);
    return overheadP90 <= 50 ? 0 : 2;
}
