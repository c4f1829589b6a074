#include "worker/profile/call_recorder.h"

#include <ATen/ATen.h>
#include <ATen/core/function_schema.h>
#include <ATen/record_function.h>

#include <chrono>
#include <mutex>
#include <sstream>

#ifdef KFORGE_HAVE_CUDA_BACKEND
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#endif

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
    } else if (t.layout() == at::kStrided && t.dim() == 0 && t.is_cpu() && at::isFloatingType(t.scalar_type())) {
        // A number the model computes with as a tensor (a traced `scores * 0.125` holds the 0.125 as one):
        // its value, for the chains that take it as a constant (core/workload/fused_patterns.h). Reading a
        // CPU value waits on no device.
        at::RecordFunctionGuard off(false);
        m.min = m.max = t.item<double>();
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

// Device time: an event pair per call on the current stream, from a pool reused across calls; read once
// after the run. Without the CUDA backend there are no events and calls keep their host times.
struct DeviceEvents {
#ifdef KFORGE_HAVE_CUDA_BACKEND
    std::vector<CUevent> pool;
    size_t used = 0;
    bool failed = false;
    // An event recorded now on the current stream; its index in the pool, or -1.
    int record()
    {
        if (failed)
            return -1;
        if (used == pool.size()) {
            CUevent e = nullptr;
            if (cuEventCreate(&e, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
                failed = true;
                return -1;
            }
            pool.push_back(e);
        }
        const auto stream = reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream().stream());
        if (cuEventRecord(pool[used], stream) != CUDA_SUCCESS) {
            failed = true;
            return -1;
        }
        return int(used++);
    }
    // Milliseconds from event a to event b, after both completed; negative when unreadable.
    double elapsedMs(int a, int b) const
    {
        float ms = 0;
        if (a < 0 || b < 0 || cuEventElapsedTime(&ms, pool[size_t(a)], pool[size_t(b)]) != CUDA_SUCCESS)
            return -1;
        return double(ms);
    }
    bool synchronize() const { return used > 0 && !failed && cuEventSynchronize(pool[used - 1]) == CUDA_SUCCESS; }
    ~DeviceEvents()
    {
        for (auto e : pool)
            cuEventDestroy(e);
    }
#else
    int record() { return -1; }
    double elapsedMs(int, int) const { return -1; }
    bool synchronize() const { return false; }
#endif
};

struct CallRecorder::State {
    std::mutex mutex;
    std::vector<CapturedCall> calls;
    std::map<std::string, std::vector<at::Tensor>> samples;
    int64_t sampleBudget = 0;
    Clock::time_point t0 = Clock::now();
    at::CallbackHandle handle = 0;
    bool active = false;
    bool deviceEvents = false, deviceTimed = false;
    DeviceEvents events;
    std::vector<std::pair<int, int>> callEvents; // per call: its start and end event, or -1
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
        // Last, so the sample copies above are outside both clocks.
        if (st->deviceEvents)
            st->callEvents.push_back({st->events.record(), -1});
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
    const auto index = static_cast<Context *>(ctx)->index;
    if (st->deviceEvents && index < st->callEvents.size())
        st->callEvents[index].second = st->events.record();
    auto &c = st->calls.at(index);
    c.durUs = std::max(0.0, std::chrono::duration<double, std::micro>(now - st->t0).count() - c.startUs);
}

// One synchronize for the whole run, then every call's device start (from the first call's, which keeps
// its host start as the origin) and duration. Any unreadable pair leaves every call on host time.
void readDeviceTimes(CallRecorder::State &st)
{
    if (!st.deviceEvents || st.callEvents.empty() || !st.events.synchronize())
        return;
    const int origin = st.callEvents.front().first;
    std::vector<std::pair<double, double>> times;
    for (const auto &[a, b] : st.callEvents) {
        const double from = st.events.elapsedMs(origin, a), dur = st.events.elapsedMs(a, b);
        if (from < 0 || dur < 0)
            return;
        times.push_back({from * 1000.0, dur * 1000.0});
    }
    const double hostOrigin = st.calls.front().startUs;
    for (size_t i = 0; i < times.size() && i < st.calls.size(); ++i) {
        st.calls[i].startUs = hostOrigin + times[i].first;
        st.calls[i].durUs = times[i].second;
    }
    st.deviceTimed = true;
}

} // namespace

CallRecorder::CallRecorder(int64_t sampleBudgetBytes, bool deviceEvents) : m_state(std::make_unique<State>())
{
    m_state->sampleBudget = sampleBudgetBytes;
    m_state->deviceEvents = deviceEvents && deviceEventsAvailable();
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
    readDeviceTimes(*m_state);
}

bool CallRecorder::deviceTimed() const
{
    return m_state->deviceTimed;
}

bool CallRecorder::deviceEventsAvailable()
{
#ifdef KFORGE_HAVE_CUDA_BACKEND
    return true;
#else
    return false;
#endif
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
