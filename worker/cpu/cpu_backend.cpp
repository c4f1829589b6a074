#include "worker/cpu/cpu_backend.h"

#include <chrono>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <fstream>
#include <thread>

#include "ops/trial_plan.h"
#include "protocol/cpu_abi.h"
#include "util/error.h"
#include "worker/cpu/cpu_compiler.h"
#include "worker/torch/checks.h"
#include "worker/torch/reference.h"

namespace {
// The shape bindings of the call in progress, for kforge_symbol().
thread_local const kforge::ShapeBindings *t_bindings = nullptr;
} // namespace

// Exported from the worker executable (ENABLE_EXPORTS) so candidates resolve it when loaded.
extern "C" int64_t kforge_symbol(const char *name)
{
    if (!t_bindings || !name)
        return -1;
    auto it = t_bindings->find(name);
    return it == t_bindings->end() ? -1 : it->second;
}

namespace kforge::worker {

namespace {

struct KfTensor { // mirrors kf_tensor in protocol/cpu_abi.h
    void *data;
    int32_t dtype;
    int32_t ndim;
    int64_t sizes[8];
    int64_t strides[8];
};
using EntryFn = int (*)(const KfTensor *, int, KfTensor *, int);

int32_t dtypeCode(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return 0;
    case at::kHalf: return 1;
    case at::kBFloat16: return 2;
    case at::kDouble: return 3;
    case at::kLong: return 4;
    case at::kInt: return 5;
    default: return -1;
    }
}

std::vector<KfTensor> describe(const std::vector<at::Tensor> &ts)
{
    std::vector<KfTensor> out;
    for (const auto &t : ts) {
        KfTensor k{};
        k.data = t.data_ptr();
        k.dtype = dtypeCode(t.scalar_type());
        k.ndim = int32_t(t.dim());
        for (int64_t i = 0; i < t.dim() && i < 8; ++i) {
            k.sizes[i] = t.size(i);
            k.strides[i] = t.stride(i);
        }
        out.push_back(k);
    }
    return out;
}

class Library {
public:
    explicit Library(const std::string &path) : m_handle(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
    ~Library()
    {
        if (m_handle)
            ::dlclose(m_handle);
    }
    void *handle() const { return m_handle; }

private:
    void *m_handle;
};

double microsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

class CpuBackend : public Backend {
public:
    std::string name() const override { return "cpu"; }

    nlohmann::json devices() const override
    {
        std::string model = "cpu";
        std::ifstream in("/proc/cpuinfo");
        for (std::string line; std::getline(in, line);)
            if (line.rfind("model name", 0) == 0) {
                model = line.substr(line.find(':') + 2);
                break;
            }
        return nlohmann::json::array({{{"backend", "cpu"}, {"name", model}, {"threads", at::get_num_threads()},
                                       {"cores", std::thread::hardware_concurrency()}}});
    }

    Verdict evaluate(const OperatorCard &card, const Candidate &candidate, const EvalOptions &options) override
    {
        Verdict v;
        auto build = m_compiler.compile(candidate.source);
        v.compile = build.report;
        if (!build.report.ok)
            return reject(v, VerdictStatus::CompileError, reason::CompileError, "the candidate did not compile:\n" + firstLines(build.report.log, 12));
        Library lib(build.sharedObject);
        if (!lib.handle())
            return reject(v, VerdictStatus::CompileError, reason::MissingEntry, std::string("the compiled candidate could not be loaded: ") + ::dlerror());
        auto entry = reinterpret_cast<EntryFn>(::dlsym(lib.handle(), kCpuEntryPoint));
        if (!entry)
            return reject(v, VerdictStatus::CompileError, reason::MissingEntry,
                          std::string("the candidate has no extern \"C\" ") + kCpuEntryPoint + " entry point");

        ShapeBindings current = card.shape;
        auto run = [&](const std::vector<at::Tensor> &in, std::vector<at::Tensor> &out) {
            auto kin = describe(in);
            auto kout = describe(out);
            t_bindings = &current;
            const int rc = entry(kin.data(), int(kin.size()), kout.data(), int(kout.size()));
            t_bindings = nullptr;
            return rc;
        };

        const at::Device cpu(at::kCPU);
        for (const auto &trial : trialPlan(card)) {
            TrialReport tr;
            tr.label = trial.label;
            tr.shape = shapeString(card, trial.shape);
            current = trial.shape;
            auto inputs = makeInputs(card, trial.shape, trial.scale, cpu, trial.special);
            std::vector<at::Tensor> before, refInputs;
            for (const auto &t : inputs) {
                before.push_back(t.clone());
                refInputs.push_back(t.clone()); // the reference gets its own allocation
            }
            const auto reference = callReference(card, refInputs, &trial.shape);
            auto outputs = makeOutputs(card, trial.shape, cpu);
            for (auto &o : outputs)
                poison(o);
            if (const int rc = run(inputs, outputs); rc != 0) {
                tr.failure = reason::EntryFailed;
                tr.detail = "kforge_entry returned " + std::to_string(rc) + " for shape " + tr.shape;
            } else {
                const auto cmp = checkTrial(card, inputs, before, outputs, reference, trial.scale);
                tr.maxAbsError = cmp.maxAbsError;
                tr.maxRelError = cmp.maxRelError;
                if (cmp.failure) {
                    tr.failure = cmp.failure->code;
                    tr.detail = cmp.failure->message;
                }
            }
            tr.passed = tr.failure.empty();
            v.trials.push_back(tr);
        }
        if (finishVerification(v, options))
            return v;
        current = card.shape;
        benchmark(card, options, run, v);
        return v;
    }

private:
    template<typename Run>
    void benchmark(const OperatorCard &card, const EvalOptions &options, Run &run, Verdict &v)
    {
        // Rotate among several input sets so neither side keeps one set hot in cache for the other.
        constexpr int kSets = 4;
        const at::Device cpu(at::kCPU);
        std::vector<std::vector<at::Tensor>> sets;
        for (int i = 0; i < kSets; ++i)
            sets.push_back(makeInputs(card, card.shape, 1.0, cpu));
        // Both sides allocate their output on every call, so allocation costs the same on each side.
        auto candidateOnce = [&](int i) {
            auto out = makeOutputs(card, card.shape, cpu);
            const auto t0 = std::chrono::steady_clock::now();
            run(sets[size_t(i % kSets)], out);
            return microsSince(t0);
        };
        auto baselineOnce = [&](int i) {
            const auto t0 = std::chrono::steady_clock::now();
            auto out = callReference(card, sets[size_t(i % kSets)], &card.shape);
            return microsSince(t0);
        };
        for (int i = 0; i < options.warmup; ++i) {
            candidateOnce(i);
            baselineOnce(i);
        }
        for (int i = 0; i < options.benchSamples; ++i) {
            // Alternate which side goes first so drift (frequency, other load) hits both equally.
            if (i % 2 == 0) {
                v.candidate.samplesUs.push_back(candidateOnce(i));
                v.baseline.samplesUs.push_back(baselineOnce(i));
            } else {
                v.baseline.samplesUs.push_back(baselineOnce(i));
                v.candidate.samplesUs.push_back(candidateOnce(i));
            }
        }
        v.candidate.summary = summarize(v.candidate.samplesUs);
        v.baseline.summary = summarize(v.baseline.samplesUs);
        v.speedup = v.candidate.summary.median > 0 ? v.baseline.summary.median / v.candidate.summary.median : 0.0;
        // A CPU shares its cores with everything else: never trust a band under 2%.
        v.noise = std::max({v.candidate.summary.relativeSpread(), v.baseline.summary.relativeSpread(), 0.02});
        v.status = decideSpeed(v.speedup, v.noise);
        if (v.status == VerdictStatus::NotFaster) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "%.3fx the baseline does not clear the noise band of %.1f%%", v.speedup, v.noise * 100);
            v.reasons.push_back({reason::NotFaster, buf});
        }
    }

    static std::string firstLines(const std::string &s, int n)
    {
        size_t pos = 0;
        for (int i = 0; i < n && pos != std::string::npos; ++i)
            pos = s.find('\n', pos + 1);
        return pos == std::string::npos ? s : s.substr(0, pos) + "\n...";
    }

    static Verdict &reject(Verdict &v, VerdictStatus status, const char *code, const std::string &message)
    {
        v.status = status;
        v.reasons.push_back({code, message});
        return v;
    }

    CpuCompiler m_compiler;
};

} // namespace

std::unique_ptr<Backend> makeCpuBackend()
{
    return std::make_unique<CpuBackend>();
}

} // namespace kforge::worker
