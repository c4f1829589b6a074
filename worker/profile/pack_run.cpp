#include "worker/profile/pack_run.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include <torch/script.h>

#include "guard/numerics.h"
#include "protocol/messages.h"
#include "runtime/fused_ops.h"
#include "runtime/kforge_runtime.h"
#include "util/error.h"
#include "util/stats.h"
#include "workload/workload_file.h"
#include "worker/profile/float64_module.h"
#include "worker/profile/model_inputs.h"
#include "worker/torch/checks.h"
#ifdef KFORGE_HAVE_CUDA_BACKEND
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#endif

namespace kforge::worker {

namespace {

std::vector<at::Tensor> tensorsOf(const c10::IValue &v)
{
    std::vector<at::Tensor> out;
    if (v.isTensor())
        out.push_back(v.toTensor());
    else if (v.isTuple())
        for (const auto &e : v.toTupleRef().elements())
            for (auto &t : tensorsOf(e))
                out.push_back(t);
    else if (v.isList())
        for (const auto &e : v.toListRef())
            for (auto &t : tensorsOf(e))
                out.push_back(t);
    return out;
}

// One timed forward, in milliseconds: device events on CUDA, the host clock on the CPU.
class Timer {
public:
    explicit Timer(at::Device device) : m_device(device)
    {
#ifdef KFORGE_HAVE_CUDA_BACKEND
        if (device.is_cuda()) {
            cuEventCreate(&m_start, CU_EVENT_DEFAULT);
            cuEventCreate(&m_stop, CU_EVENT_DEFAULT);
        }
#endif
    }
    ~Timer()
    {
#ifdef KFORGE_HAVE_CUDA_BACKEND
        if (m_start)
            cuEventDestroy(m_start);
        if (m_stop)
            cuEventDestroy(m_stop);
#endif
    }
    template <class F>
    double time(F &&f)
    {
#ifdef KFORGE_HAVE_CUDA_BACKEND
        if (m_device.is_cuda()) {
            const auto stream = reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream(m_device.index()).stream());
            cuEventRecord(m_start, stream);
            f();
            cuEventRecord(m_stop, stream);
            cuEventSynchronize(m_stop);
            float ms = 0;
            cuEventElapsedTime(&ms, m_start, m_stop);
            return ms;
        }
#endif
        const auto t0 = std::chrono::steady_clock::now();
        f();
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    const char *clock() const { return m_device.is_cuda() ? "device events" : "host clock"; }

private:
    at::Device m_device;
#ifdef KFORGE_HAVE_CUDA_BACKEND
    CUevent m_start = nullptr, m_stop = nullptr;
#endif
};

nlohmann::json summary(std::vector<double> ms)
{
    auto sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    return {{"median_ms", sorted[sorted.size() / 2]}, {"min_ms", sorted.front()}, {"max_ms", sorted.back()}, {"samples_ms", ms}};
}

DType dtypeOf(const at::Tensor &t)
{
    switch (t.scalar_type()) {
    case at::kHalf: return DType::F16;
    case at::kBFloat16: return DType::BF16;
    case at::kDouble: return DType::F64;
    default: return DType::F32;
    }
}

// Adds one run's counters (runtime::countersJson()) into the total.
void addCounters(nlohmann::json &total, const nlohmann::json &run)
{
    for (const auto &[op, c] : run.items()) {
        auto &t = total[op];
        if (!t.is_object())
            t = nlohmann::json::object();
        if (!t.contains("why"))
            t["why"] = nlohmann::json::object();
        if (!t.contains("example"))
            t["example"] = nlohmann::json::object();
        t["taken"] = t.value("taken", int64_t(0)) + c.value("taken", int64_t(0));
        t["fell_back"] = t.value("fell_back", int64_t(0)) + c.value("fell_back", int64_t(0));
        const auto why = c.value("why", nlohmann::json::object()), examples = c.value("example", nlohmann::json::object());
        for (const auto &[kind, n] : why.items())
            t["why"][kind] = t["why"].value(kind, int64_t(0)) + n.get<int64_t>();
        for (const auto &[kind, text] : examples.items())
            if (!t["example"].contains(kind))
                t["example"][kind] = text;
    }
}

c10::IValue toDouble(const c10::IValue &v)
{
    if (v.isTensor() && at::isFloatingType(v.toTensor().scalar_type()))
        return v.toTensor().to(at::kDouble);
    return v;
}

} // namespace

nlohmann::json runPackReply(const nlohmann::json &id, const nlohmann::json &req)
{
    WorkloadFile w;
    std::string pack;
    int iters = 10;
    std::string executor;
    try {
        w = parseWorkload(req.at("workload"), "workload");
        w.dir = req.value("dir", std::string());
        pack = req.at("pack").get<std::string>();
        iters = std::clamp(req.value("iters", 10), 1, 1000);
        executor = req.value("executor", std::string("as_written"));
        if (executor != "as_written" && executor != "default")
            throw Error("executor is as_written or default, not '" + executor + "'");
    } catch (const std::exception &e) {
        return errorReply(id, std::string("malformed run_pack request: ") + e.what());
    }
    try {
        if (w.model.kind != "torchscript")
            throw Error("run_pack runs TorchScript models, not a " + w.model.kind + " workload");
        const auto device = profilingDevice(req.value("device", std::string("auto")));
        auto module = loadModule(w.resolve(w.model.path), "the model");
        module.eval();
        module.to(device);
        const auto inputs = makeModelInputs(w, device);
        // With the pack, the model runs with its fused chains rewritten into the operators the pack may
        // have kernels for; without a pack those operators compute the chains as written.
        auto fused = module.clone();
        const int rewritten = runtime::rewriteFusedPatterns(fused);
        torch::NoGradGuard noGrad;
        // as_written: the calls the profile saw, as eager PyTorch makes them; default: TorchScript's own
        // executor, whose fuser may merge pointwise calls into kernels a pack cannot replace.
        std::optional<AsWrittenExecution> asWritten;
        if (executor == "as_written")
            asWritten.emplace();
        Timer timer(device);
        c10::IValue without, with;
        std::vector<double> withoutMs, withMs, firstMs;
        std::string packSummary;
        nlohmann::json counters = nlohmann::json::object();
        runtime::unloadPacks();
        // A warm-up of each, then the runs interleaved; the pack is registered only around its runs, and
        // the counters of the timed runs are added up. The first forward after each load also loads the
        // kernels' modules onto the device, a once-per-process cost a program pays when it loads the pack:
        // it is timed apart, and the timed run is the next one.
        for (int i = -1; i < iters; ++i) {
            const double a = timer.time([&] { without = module.forward(inputs); });
            packSummary = runtime::loadPack(pack);
            double b = 0, first = 0;
            try {
                first = timer.time([&] { with = fused.forward(inputs); });
                runtime::resetCounters();
                b = timer.time([&] { with = fused.forward(inputs); });
            } catch (...) {
                runtime::unloadPacks();
                throw;
            }
            if (i >= 0) {
                withoutMs.push_back(a);
                withMs.push_back(b);
                firstMs.push_back(first);
                addCounters(counters, nlohmann::json::parse(runtime::countersJson()));
            }
            runtime::unloadPacks();
        }
        // Outputs: each against the model in float64 on the same inputs, as the guard judges a kernel (a
        // traced model's dtype constants made float64 too: worker/profile/float64_module.h). A model that
        // still does not run in float64 holds each output to the guard's floor of units from its own output
        // without the pack.
        const auto a32 = tensorsOf(without), p32 = tensorsOf(with);
        std::vector<at::Tensor> refOut;
        std::string against; // what the outputs were held to, where not the model in float64
        try {
            auto ref = module.clone();
            retargetFloatingDtypes(ref, at::kDouble);
            ref.to(at::kDouble);
            std::vector<c10::IValue> inputs64;
            for (const auto &v : inputs)
                inputs64.push_back(toDouble(v));
            refOut = tensorsOf(ref.forward(inputs64));
        } catch (const std::exception &e) { // c10::Error, or the interpreter's JITException
            // The interpreter's own error is its message's last line (the first says where it failed).
            std::string why = e.what();
            while (!why.empty() && (why.back() == '\n' || why.back() == ' '))
                why.pop_back();
            why = why.substr(why.rfind('\n') + 1);
            against = "the model as written (it does not run in float64: " + why + ")";
            refOut.clear();
            for (const auto &t : a32)
                refOut.push_back(at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t);
        }
        if (a32.size() != p32.size() || refOut.size() != a32.size())
            throw Error("the model returned " + std::to_string(a32.size()) + " tensors without the pack and " + std::to_string(p32.size())
                        + " with it");
        bool match = true;
        std::string note;
        nlohmann::json outs = nlohmann::json::array();
        for (size_t o = 0; o < a32.size(); ++o) {
            const auto name = "out" + std::to_string(o);
            guard::OutputErrors e;
            std::optional<Reason> why;
            if (a32[o].sizes() != p32[o].sizes() || a32[o].scalar_type() != p32[o].scalar_type()) {
                why = Reason{"output_mismatch", name + ": a different shape or dtype with the pack"};
            } else if (at::isFloatingType(a32[o].scalar_type())) {
                const Reference64 r{refOut[o].to(a32[o].device()), {}, 1};
                e = measureOutput(name, p32[o].contiguous(), a32[o].contiguous(), r, ErrorModel::Pointwise, dtypeOf(a32[o]), 0);
                why = guard::judgeOutput(e, ErrorModel::Pointwise);
            } else if (!at::equal(p32[o], a32[o])) {
                why = Reason{"output_mismatch", name + ": integer outputs differ with the pack"};
            }
            outs.push_back({{"name", name}, {"pack_units", e.candidateUnits}, {"aten_units", e.atenUnits},
                            {"allowed_units", guard::allowedUnits(e.atenUnits)}, {"over_bound", e.overBound}, {"ok", !why.has_value()},
                            {"reason", why ? why->message : ""}});
            if (why) {
                match = false;
                note += (note.empty() ? "" : "; ") + why->message;
            }
        }
        if (match && !against.empty())
            note = "within the guard's floor of " + std::to_string(int(guard::kFloorUnits)) + " pointwise units of " + against;
        else if (match)
            note = "within the guard's numerics against the model in float64 (pointwise units, at most " + std::to_string(int(guard::kAtenFactor))
                 + "x ATen's own error)";
        const auto sw = summary(withoutMs), sp = summary(withMs);
        const nlohmann::json report = {{"device", device.str()}, {"clock", timer.clock()}, {"iters", iters}, {"executor", executor}, {"without", sw}, {"with", sp}, {"with_first_after_load", summary(firstMs)}, {"fused_chains", rewritten},
                                       {"speedup", sw["median_ms"].get<double>() / std::max(1e-9, sp["median_ms"].get<double>())},
                                       {"outputs_match", match}, {"outputs_note", note}, {"outputs", outs}, {"counters", counters},
                                       {"pack_summary", packSummary}};
        return {{"id", id}, {"type", "pack_run"}, {"ok", true}, {"report", report}};
    } catch (const c10::Error &e) {
        runtime::unloadPacks();
        return errorReply(id, std::string("the model failed: ") + e.what_without_backtrace());
    } catch (const std::exception &e) {
        runtime::unloadPacks();
        return errorReply(id, e.what());
    }
}

} // namespace kforge::worker
