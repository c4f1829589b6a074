#include "worker/profile/call_recorder.h"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>

#include <chrono>
#include <mutex>
#include <sstream>

namespace kforge::worker {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kRangeMaxNumel = int64_t(1) << 22; // integer tensors up to this size get their value range

std::string dtypeText(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return "float32";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kDouble: return "float64";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kShort: return "int16";
    case at::kChar: return "int8";
    case at::kByte: return "uint8";
    case at::kBool: return "bool";
    case at::kComplexFloat: return "complex64";
    case at::kComplexDouble: return "complex128";
    default: return c10::toString(t);
    }
}

TensorMeta metaOf(const at::Tensor &t)
{
    TensorMeta m;
    m.shape = t.sizes().vec();
    m.strides = t.layout() == at::kStrided ? t.strides().vec() : std::vector<int64_t>{};
    if (m.strides.empty())
        m.strides.assign(m.shape.size(), 0);
    m.dtype = dtypeText(t.scalar_type());
    if (t.layout() == at::kStrided && t.numel() > 0 && t.numel() <= kRangeMaxNumel
        && (at::isIntegralType(t.scalar_type(), /*includeBool=*/false))) {
        // Computing the range dispatches ATen calls of its own: not recorded, and outside the timing.
        at::RecordFunctionGuard off(false);
        m.min = t.min().item<double>();
        m.max = t.max().item<double>();
    }
    return m;
}

CallArg argOf(const c10::IValue &v, const std::string &name)
{
    CallArg a;
    a.name = name;
    if (v.isNone() || (v.isTensor() && !v.toTensor().defined())) {
        a.kind = "none";
    } else if (v.isTensor()) {
        a.kind = "tensor";
        a.tensors.push_back(metaOf(v.toTensor()));
    } else if (v.isBool()) {
        a.kind = "bool";
        a.value = v.toBool();
    } else if (v.isInt()) {
        a.kind = "int";
        a.value = v.toInt();
    } else if (v.isDouble()) {
        a.kind = "double";
        a.value = v.toDouble();
    } else if (v.isString()) {
        a.kind = "str";
        a.value = v.toStringRef();
    } else if (v.isIntList()) {
        a.kind = "int_list";
        a.value = v.toIntVector();
    } else if (v.isDoubleList()) {
        a.kind = "double_list";
        a.value = v.toDoubleVector();
    } else if (v.isBoolList()) {
        a.kind = "bool_list";
        a.value = nlohmann::json::array();
        for (bool b : v.toBoolList())
            a.value.push_back(b);
    } else if (v.isTensorList()) {
        a.kind = "tensor_list";
        for (const at::Tensor &t : v.toTensorVector())
            a.tensors.push_back(metaOf(t));
    } else {
        a.kind = "other";
        std::ostringstream s;
        s << v.tagKind();
        if (v.isDevice())
            s << " " << v.toDevice();
        a.value = s.str();
    }
    return a;
}

struct Context : at::ObserverContext {
    size_t index = 0;
};

} // namespace

struct CallRecorder::State {
    std::mutex mutex;
    std::vector<CapturedCall> calls;
    std::map<std::string, std::vector<at::Tensor>> samples;
    int64_t sampleBudget = 0;
    Clock::time_point t0 = Clock::now();
    at::CallbackHandle handle = 0;
    bool active = false;
};

namespace {

CallRecorder::State *g_state = nullptr; // one recorder at a time, as the worker profiles one workload at a time
thread_local int t_depth = 0;

double usSince(Clock::time_point t0)
{
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction &fn)
{
    auto *st = g_state;
    if (!st)
        return nullptr;
    CapturedCall c;
    if (const auto name = fn.operator_name()) {
        c.op = name->name;
        c.overload = name->overload_name;
    } else {
        c.op = fn.name();
    }
    std::vector<std::string> argNames;
    if (const auto schema = fn.operator_schema()) {
        std::ostringstream s;
        s << *schema;
        c.schema = s.str();
        for (const auto &arg : schema->arguments())
            argNames.push_back(arg.name());
    }
    // The TorchScript interpreter may hand over more of its stack than the operator takes (the module
    // object of a method it has not inlined): the operator's arguments are the last ones.
    auto inputs = fn.inputs();
    if (!argNames.empty() && inputs.size() > argNames.size())
        inputs = inputs.slice(inputs.size() - argNames.size());
    std::vector<at::Tensor> tensors;
    for (size_t i = 0; i < inputs.size(); ++i) {
        c.args.push_back(argOf(inputs[i], i < argNames.size() ? argNames[i] : std::string()));
        if (c.args.back().kind == "tensor")
            tensors.push_back(inputs[i].toTensor());
    }
    c.depth = t_depth++;
    c.tid = int64_t(fn.threadId());
    auto ctx = std::make_unique<Context>();
    {
        std::lock_guard lock(st->mutex);
        if (c.depth == 0) {
            auto sig = c.signature();
            if (!st->samples.count(sig)) {
                int64_t bytes = 0;
                for (const auto &t : tensors)
                    bytes += int64_t(t.nbytes());
                if (bytes <= st->sampleBudget) {
                    at::RecordFunctionGuard off(false);
                    std::vector<at::Tensor> copies;
                    for (const auto &t : tensors)
                        copies.push_back(t.detach().clone());
                    st->sampleBudget -= bytes;
                    st->samples.emplace(std::move(sig), std::move(copies));
                }
            }
        }
        ctx->index = st->calls.size();
        st->calls.push_back(std::move(c));
        // CUDA: record a start event on the current stream here (and an end event in onEnd), and fill
        // durUs from their elapsed time after the run synchronizes. Not done yet: CPU time only.
        st->calls.back().startUs = usSince(st->t0);
    }
    return ctx;
}

void onEnd(const at::RecordFunction &, at::ObserverContext *ctx)
{
    const auto now = Clock::now();
    --t_depth;
    auto *st = g_state;
    if (!st || !ctx)
        return;
    std::lock_guard lock(st->mutex);
    auto &c = st->calls.at(static_cast<Context *>(ctx)->index);
    c.durUs = std::max(0.0, std::chrono::duration<double, std::micro>(now - st->t0).count() - c.startUs);
}

} // namespace

CallRecorder::CallRecorder(int64_t sampleBudgetBytes) : m_state(std::make_unique<State>())
{
    m_state->sampleBudget = sampleBudgetBytes;
    g_state = m_state.get();
    at::enableRecordFunction(true);
    m_state->handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&onStart, &onEnd).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
    m_state->active = true;
}

CallRecorder::~CallRecorder()
{
    stop();
}

void CallRecorder::stop()
{
    if (!m_state->active)
        return;
    at::removeCallback(m_state->handle);
    m_state->active = false;
    g_state = nullptr;
    t_depth = 0;
}

const std::vector<CapturedCall> &CallRecorder::calls() const
{
    return m_state->calls;
}

const std::vector<at::Tensor> *CallRecorder::sample(const std::string &signature) const
{
    auto it = m_state->samples.find(signature);
    return it == m_state->samples.end() ? nullptr : &it->second;
}

} // namespace kforge::worker
