#include "worker/profile/workload_profiler.h"

#include <torch/script.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include "protocol/messages.h"
#include "runtime/fused_ops.h"
#include "runtime/kforge_runtime.h"
#include "util/error.h"
#include "workload/call_cards.h"
#include "workload/fused_patterns.h"
#include "workload/problem_cards.h"
#include "worker/profile/call_recorder.h"
#include "worker/profile/model_inputs.h"
#include "worker/profile/traced_graph.h"
#include "worker/torch/reference.h"

namespace kforge::worker {

namespace {

std::string firstLine(const std::string &s)
{
    const auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
}

int tensorReturns(const CapturedCall &c, std::string &why)
{
    const auto handle = c10::Dispatcher::singleton().findSchema({c.op, c.overload});
    if (!handle) {
        why = "this libtorch has no operator " + c.qualifiedName();
        return -1;
    }
    int n = 0;
    for (const auto &r : handle->schema().returns())
        if (r.type()->kind() == c10::TypeKind::TensorType)
            ++n;
        else {
            why = "returns a " + r.type()->str() + ", which a card cannot describe";
            return -1;
        }
    return n;
}

std::string dtypeOf(const at::Tensor &t)
{
    for (DType d : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32, DType::Bool})
        if (scalarType(d) == t.scalar_type())
            return dtypeName(d);
    return c10::toString(t.scalar_type());
}

// The card's outputs, from running its reference once on inputs of the captured shape, on the device
// the model ran on (a large matrix product is minutes on a CPU).
void fillOutputs(OperatorCard &card, at::Device device)
{
    const auto inputs = makeInputs(card, card.shape, 1.0, device);
    const auto outs = callReference(card, inputs);
    if (!card.family.empty())
        return; // a family card's outputs are the family's, at the flattened shape
    for (size_t i = 0; i < outs.size(); ++i) {
        auto &spec = card.outputs[i];
        spec.dims.clear();
        const auto dt = dtypeOf(outs[i]);
        spec.dtype = dtypeFromName(dt);
        for (int64_t d = 0; d < outs[i].dim(); ++d) {
            const auto sym = spec.name + "_" + std::to_string(d);
            spec.dims.push_back(sym);
            card.shape[sym] = outs[i].size(d);
        }
    }
    if (!card.outputs.empty() && !at::isFloatingType(outs[0].scalar_type()))
        card.errorModel = ErrorModel::Exact;
}

void makeCards(WorkloadFile &w, const CallRecorder *recorder, const std::string &samplesPath, at::Device device)
{
    w.cards.clear();
    w.skipped.clear();
    w.samples.clear();
    torch::jit::Module holder("kforge_samples");
    bool anySample = false;
    const auto groups = groupCalls(w.calls);
    int index = 0;
    for (const auto &g : groups) {
        const auto &call = w.calls.at(g.calls.front());
        std::string why;
        const int returns = tensorReturns(call, why);
        if (returns < 0) {
            w.skipped.push_back({call.qualifiedName(), why});
            continue;
        }
        auto made = cardForCall(call, returns, index);
        if (!made.card) {
            w.skipped.push_back({call.qualifiedName(), made.why});
            continue;
        }
        auto &card = *made.card;
        card.calls = int64_t(g.calls.size());
        card.workloadMs = g.totalUs / 1000.0;
        try {
            fillOutputs(card, device);
        } catch (const std::exception &e) {
            w.skipped.push_back({call.qualifiedName(), std::string("its reference did not run on made inputs: ") + firstLine(e.what())});
            continue;
        }
        if (recorder && !samplesPath.empty())
            if (const auto *tensors = recorder->sample(g.signature)) {
                const auto prefix = "c" + std::to_string(index) + "_";
                for (size_t i = 0; i < tensors->size(); ++i)
                    holder.register_buffer(prefix + std::to_string(i), (*tensors)[i].to(at::kCPU));
                w.samples[card.key] = {samplesPath, prefix};
                anySample = true;
            }
        w.cards.push_back(std::move(card));
        ++index;
    }
    if (anySample)
        holder.save(samplesPath);
    // Chains one kernel can do in one pass (attention's softmax with its scale, mask and casts), each a
    // card of its own beside the cards of its calls.
    for (auto &card : fusedPatternCards(w.calls, index))
        w.cards.push_back(std::move(card));
}

TensorMeta metaOfTensor(const at::Tensor &t)
{
    TensorMeta m;
    m.shape = t.sizes().vec();
    m.strides = t.strides().vec();
    m.dtype = dtypeOf(t);
    return m;
}

// The problem's cards: its whole forward offered to every family whose signature fits. Each card's
// reference is run once at its shape and at each held-out shape; a shape the forward refuses is dropped,
// a card whose own shape it refuses is skipped with the reason.
void addProblemCards(WorkloadFile &w, const std::vector<c10::IValue> &inputs, const c10::IValue &output, at::Device device,
                     const TracedGraph &graph)
{
    ProblemSignature sig;
    sig.graph = graph;
    sig.name = w.name.empty() ? "problem" : w.name;
    sig.modulePath = w.resolve(w.model.path);
    sig.source = w.problemSource;
    for (const auto &v : inputs)
        if (v.isTensor()) {
            sig.inputs.push_back(metaOfTensor(v.toTensor()));
            // Whether it was ever negative: its cards then draw it so (problem_cards.cpp, makeModuleReference).
            // Integers keep their range too: a cross entropy's targets drawn outside [0, classes) fail
            // its forward (on a GPU as a device-side assert that poisons the worker's context).
            const auto &t = v.toTensor();
            const bool integral = at::isIntegralType(t.scalar_type(), /*includeBool=*/false);
            if (t.numel() > 0 && (t.is_floating_point() || integral)) {
                sig.inputs.back().min = t.min().item<double>();
                if (integral)
                    sig.inputs.back().max = t.max().item<double>();
            }
        }
    if (output.isTensor())
        sig.outputs.push_back(metaOfTensor(output.toTensor()));
    else if (output.isTuple())
        for (const auto &v : output.toTupleRef().elements())
            if (v.isTensor())
                sig.outputs.push_back(metaOfTensor(v.toTensor()));
    if (sig.inputs.size() != inputs.size()) {
        w.skipped.push_back({"problem " + sig.name, "takes inputs that are not tensors, which a card cannot describe"});
        return;
    }
    if (const auto why = problemCardsUnfit(sig); !why.empty()) {
        w.skipped.push_back({"problem " + sig.name, why});
        return;
    }
    auto cards = familyCardsForProblem(sig);
    cards.push_back(wholeForwardCard(sig));
    for (auto &card : cards) {
        try {
            callReference(card, makeInputs(card, card.shape, 1.0, device));
        } catch (const std::exception &e) {
            w.skipped.push_back({card.key, std::string("its forward did not run at the card's shape: ") + firstLine(e.what())});
            continue;
        }
        std::vector<ShapeBindings> kept;
        for (const auto &shape : card.heldOutShapes) {
            try {
                callReference(card, makeInputs(card, shape, 1.0, device), &shape);
                kept.push_back(shape);
            } catch (const std::exception &) {
            }
        }
        card.heldOutShapes = kept;
        card.calls = 1;
        w.cards.push_back(std::move(card));
    }
}

} // namespace

nlohmann::json profileWorkloadReply(const nlohmann::json &id, const nlohmann::json &req)
{
    WorkloadFile w;
    try {
        w = parseWorkload(req.at("workload"), "workload");
        w.dir = req.value("dir", std::string());
    } catch (const std::exception &e) {
        return errorReply(id, std::string("malformed profile_workload request: ") + e.what());
    }
    const int warmup = std::clamp(req.value("warmup", 1), 0, 100), runs = std::clamp(req.value("runs", 1), 1, 100);
    const auto samplesPath = req.value("samples_path", std::string());
    const bool problem = req.value("problem", false);
    const auto pack = req.value("pack", std::string());
    std::string packSummary;
    nlohmann::json packCounters = nlohmann::json::object();
    at::Device device = at::kCPU;
    bool deviceTimed = false;
    try {
        device = profilingDevice(req.value("device", std::string("auto")));
        if (!pack.empty() && req.value("calls_only", false))
            throw Error("a profile with a pack runs the model, and this workload's model is not TorchScript");
        std::unique_ptr<CallRecorder> recorder;
        std::vector<c10::IValue> inputs;
        c10::IValue output;
        TracedGraph traced; // a problem's forward, for its fused pointwise card
        if (!req.value("calls_only", false)) {
            if (w.model.kind != "torchscript")
                throw Error("the worker runs TorchScript models; a " + w.model.kind + " workload is captured by "
                            "python/kforge_capture.py (kforge-cli import), and its calls are then made into cards with calls_only");
            auto module = loadModule(w.resolve(w.model.path), "the model");
            module.eval();
            if (problem)
                traced = tracedGraphOf(module);
            module.to(device);
            inputs = makeModelInputs(w, device);
            torch::NoGradGuard noGrad;
            AsWrittenExecution asWritten;
            // With a pack, the model is profiled with its kernels registered (warm-up included, so the
            // pack's first-call setup is not in the timeline), and the counters say which calls took them.
            if (!pack.empty()) {
                packSummary = runtime::loadPack(pack);
                runtime::rewriteFusedPatterns(module); // the chains the pack may have fused kernels for
            }
            try {
                for (int i = 0; i < warmup; ++i)
                    module.forward(inputs);
                runtime::resetCounters(); // the warm-up's calls are not counted
                recorder = std::make_unique<CallRecorder>(int64_t(256) << 20, device.is_cuda());
                for (int i = 0; i < runs; ++i)
                    output = module.forward(inputs);
                recorder->stop();
                if (!pack.empty())
                    packCounters = nlohmann::json::parse(runtime::countersJson());
            } catch (const c10::Error &e) {
                runtime::unloadPacks();
                throw Error("the model failed while running: " + firstLine(e.what_without_backtrace()));
            } catch (...) {
                runtime::unloadPacks();
                throw;
            }
            runtime::unloadPacks();
            w.calls = recorder->calls();
            deviceTimed = recorder->deviceTimed();
        } else if (w.calls.empty()) {
            throw Error("calls_only: the workload has no calls to make cards from");
        }
        // A profile with a pack is a timeline to compare against the one without: its calls only.
        if (pack.empty())
            makeCards(w, recorder.get(), samplesPath, device);
        else
            w.cards.clear();
        if (problem && pack.empty()) {
            if (inputs.empty())
                throw Error("problem cards need the problem's TorchScript module run by the worker, not calls_only");
            addProblemCards(w, inputs, output, device, traced);
        }
    } catch (const std::exception &e) {
        return errorReply(id, e.what());
    }
    nlohmann::json reply = {{"id", id}, {"type", "workload_profile"}, {"ok", true}, {"workload", workloadToJson(w)}, {"device", device.str()},
                            {"timing", deviceTimed ? "device events" : "host clock"}};
    if (!pack.empty())
        reply["pack"] = {{"summary", packSummary}, {"counters", packCounters}};
    return reply;
}

} // namespace kforge::worker
