// The pack runtime's dispatcher side. Each operator a pack covers gets one boxed kernel registered on the
// BackendSelect key. BackendSelect is in every call's key set (it is in the dispatcher's default
// thread-local include set, in 1.13 and 2.x alike) and ranks just above the backends and below autograd,
// functionalization and Python modes. So our kernel sees exactly the calls the backend kernel would,
// after autograd has recorded them; it checks the guards and runs the pack kernel, or hands the call on
// with redispatchBoxed() to the keys below BackendSelect, which reaches the operator's own CPU or CUDA
// kernel untouched. Overriding the CPU or CUDA key itself would leave no public way to call the kernel
// it replaced (the dispatcher's kernel lists are private), and capturing one through its internals
// would break between versions. Operators that have a BackendSelect kernel of their own (factory
// functions) are refused.
//
// A composite operator (CompositeImplicitAutograd: softmax.int, layer_norm, what TorchScript models
// call) never reaches BackendSelect as itself: from the autograd key down it runs as its decomposition.
// Its kernel is registered on the backend's autograd key (AutogradCPU, AutogradCUDA: a direct
// registration there is the one thing that ranks above a composite kernel); a call falls back when autograd must
// record it (grad mode on and an input that requires grad), and a fallback redispatches below the
// autograd keys, where the decomposition runs and its own operators are recorded as usual. Under
// torch.inference_mode the autograd keys are skipped, and with them such a kernel.
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/library.h>

#include <nlohmann/json.hpp>

#include "pack/pack_reader.h"
#include "runtime/cpu_kernel.h"
#include "runtime/fused_ops.h"
#include "runtime/guard.h"
#include "runtime/kforge_runtime.h"
#include "util/error.h"
#ifdef KFORGE_RUNTIME_CUDA
#include "runtime/cuda_kernel.h"
#endif

namespace kforge::runtime {

namespace {

constexpr size_t kKinds = size_t(Mismatch::Count);

struct Counters {
    std::atomic<int64_t> taken{0}, fellBack{0};
    std::array<std::atomic<int64_t>, kKinds> why{};
    std::mutex mutex;
    std::array<std::string, kKinds> example;
};

struct Kernel {
    pack::PackKernel spec;
    std::unique_ptr<Guard> guard;
    std::vector<c10::ScalarType> outputTypes;
    std::vector<size_t> inputArgs; // the argument each input is
    std::unique_ptr<CpuKernel> cpu;
#ifdef KFORGE_RUNTIME_CUDA
    std::unique_ptr<CudaKernel> cuda;
#endif
};

struct Slot {
    std::string op;
    size_t args = 0;
    bool composite = false; // registered on the autograd keys (the operator has no backend kernel of its own)
    std::vector<std::unique_ptr<Kernel>> kernels;
    Counters counters;
};

struct LoadedPack {
    std::string dir;
    std::vector<std::unique_ptr<Slot>> slots;
    std::vector<std::unique_ptr<torch::Library>> libraries; // destroyed first: deregisters before the slots go
    ~LoadedPack() { libraries.clear(); }
};

std::mutex g_mutex;
std::vector<std::unique_ptr<LoadedPack>> g_packs;

c10::ScalarType toScalarType(DType t)
{
    static constexpr c10::ScalarType map[] = {c10::ScalarType::Float, c10::ScalarType::Half, c10::ScalarType::BFloat16,
                                              c10::ScalarType::Double, c10::ScalarType::Long, c10::ScalarType::Int};
    return map[int(t)];
}

KfTensor kfTensor(void *data, DType dtype, const std::vector<int64_t> &sizes)
{
    KfTensor t{};
    t.data = data;
    t.dtype = int32_t(dtype); // kf_dtype follows DType's order
    t.ndim = int32_t(sizes.size());
    int64_t stride = 1;
    for (int d = t.ndim - 1; d >= 0; --d) {
        t.sizes[d] = sizes[size_t(d)];
        t.strides[d] = stride;
        stride *= sizes[size_t(d)];
    }
    return t;
}

// Runs the pack kernel; on success replaces the arguments on the stack with its outputs.
bool runKernel(const Kernel &k, c10::IValue *args, const Binding &b, torch::jit::Stack *stack, size_t nargs)
{
    std::vector<at::Tensor> outs;
    outs.reserve(k.spec.outputs.size());
    at::Device dev(at::kCPU);
    for (const auto &iv : c10::ArrayRef<c10::IValue>(args, nargs))
        if (iv.isTensor()) {
            dev = iv.toTensor().device();
            break;
        }
    for (size_t i = 0; i < k.spec.outputs.size(); ++i)
        outs.push_back(at::empty(k.guard->outputSizes(i, args, b), at::TensorOptions().dtype(k.outputTypes[i]).device(dev)));
    std::vector<const at::Tensor *> ins(k.inputArgs.size(), nullptr);
    for (size_t i = 0; i < k.inputArgs.size(); ++i)
        ins[i] = &args[k.inputArgs[i]].toTensor();
    if (k.cpu) {
        std::array<KfTensor, 8> in{}, out{};
        if (ins.size() > in.size() || outs.size() > out.size())
            return false;
        for (size_t i = 0; i < ins.size(); ++i)
            in[i] = kfTensor(ins[i]->data_ptr(), k.spec.inputs[i].dtype, k.guard->kernelSizes(k.spec.inputs[i], b));
        for (size_t i = 0; i < outs.size(); ++i)
            out[i] = kfTensor(outs[i].data_ptr(), k.spec.outputs[i].dtype, k.guard->kernelSizes(k.spec.outputs[i], b));
        if (k.cpu->call(in.data(), int(ins.size()), out.data(), int(outs.size()), &k.guard->symbols(), b.value.data()) != 0)
            return false;
    }
#ifdef KFORGE_RUNTIME_CUDA
    else if (k.cuda) {
        std::vector<const at::Tensor *> outPtrs;
        for (auto &o : outs)
            outPtrs.push_back(&o);
        if (!k.cuda->launch(ins, outPtrs, *k.guard, b))
            return false;
    }
#endif
    else {
        return false;
    }
    torch::jit::drop(*stack, nargs);
    for (auto &o : outs)
        stack->emplace_back(std::move(o));
    return true;
}

class PackOperator final : public c10::OperatorKernel {
public:
    explicit PackOperator(Slot *slot) : m_slot(slot) {}

    void operator()(const c10::OperatorHandle &op, c10::DispatchKeySet ks, torch::jit::Stack *stack)
    {
        c10::IValue *args = stack->data() + (stack->size() - m_slot->args);
        Mismatch why = Mismatch::Device;
        const Kernel *last = nullptr;
        for (const auto &k : m_slot->kernels) {
            Binding b;
            last = k.get();
            why = k->guard->check(args, b, m_slot->composite);
            if (why != Mismatch::None)
                continue;
            if (runKernel(*k, args, b, stack, m_slot->args)) {
                m_slot->counters.taken.fetch_add(1, std::memory_order_relaxed);
                return;
            }
            why = Mismatch::Kernel;
        }
        auto &c = m_slot->counters;
        c.fellBack.fetch_add(1, std::memory_order_relaxed);
        if (c.why[size_t(why)].fetch_add(1, std::memory_order_relaxed) == 0 && last) {
            const auto text = why == Mismatch::Kernel ? "the kernel refused these arguments (kforge_entry returned non-zero)"
                                                      : last->guard->describe(args);
            std::lock_guard lock(c.mutex);
            c.example[size_t(why)] = text;
        }
        op.redispatchBoxed(ks & (m_slot->composite ? c10::after_autograd_keyset
                                                   : c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, c10::DispatchKey::BackendSelect)),
                           stack);
    }

private:
    Slot *m_slot;
};

std::pair<std::string, std::string> splitName(const std::string &op)
{
    const auto colons = op.find("::");
    if (colons == std::string::npos)
        throw Error("'" + op + "' is not a qualified operator name (namespace::name)");
    return {op.substr(0, colons), op.substr(colons + 2)};
}

} // namespace

std::string loadPack(const std::string &dir)
{
    pack::DeviceArchs archs;
#ifdef KFORGE_RUNTIME_CUDA
    archs.cuda = cudaArchOfCurrentDevice();
#endif
    const auto manifest = pack::readPack(dir, archs);
    std::lock_guard lock(g_mutex);
    auto loaded = std::make_unique<LoadedPack>();
    loaded->dir = dir;
    std::map<std::string, Slot *> byOp;
    for (const auto &spec : manifest.kernels) {
        const auto refuse = [&](const std::string &why) { return Error("pack " + dir + " is refused: kernel " + spec.key + ": " + why); };
        const auto handle = c10::Dispatcher::singleton().findSchema({spec.atenOp, spec.atenOverload});
        if (!handle)
            throw refuse("this libtorch has no operator " + spec.qualifiedOp());
        if (handle->hasKernelForDispatchKey(c10::DispatchKey::BackendSelect))
            throw refuse(spec.qualifiedOp() + " has a BackendSelect kernel of its own (a factory function): the runtime cannot stand in front of it");
        for (const auto &p : g_packs)
            for (const auto &s : p->slots)
                if (s->op == spec.qualifiedOp())
                    throw refuse(spec.qualifiedOp() + " already has kernels from the pack " + p->dir + " (unload it first)");
        auto k = std::make_unique<Kernel>();
        k->spec = spec;
        try {
            k->guard = std::make_unique<Guard>(spec, handle->schema(), spec.backend == "cpu" ? c10::DeviceType::CPU : c10::DeviceType::CUDA);
        } catch (const Error &e) {
            throw refuse(e.what());
        }
        for (const auto &o : spec.outputs)
            k->outputTypes.push_back(toScalarType(o.dtype));
        k->inputArgs.assign(spec.inputs.size(), 0);
        for (size_t i = 0; i < spec.arguments.size(); ++i)
            if (spec.arguments[i].contains("input"))
                k->inputArgs[spec.arguments[i]["input"].get<size_t>()] = i;
        const auto file = [&](const pack::PackFile &f) { return dir + "/" + f.path; };
        try {
            if (spec.backend == "cpu") {
                k->cpu = std::make_unique<CpuKernel>(file(spec.binaryFor("cpu")->file));
            } else {
#ifdef KFORGE_RUNTIME_CUDA
                k->cuda = std::make_unique<CudaKernel>(spec, file(spec.binaryFor(archs.cuda)->file));
#else
                throw Error("this runtime was built without CUDA");
#endif
            }
        } catch (const Error &e) {
            throw refuse(e.what());
        }
        Slot *&slot = byOp[spec.qualifiedOp()];
        if (!slot) {
            loaded->slots.push_back(std::make_unique<Slot>());
            slot = loaded->slots.back().get();
            slot->op = spec.qualifiedOp();
            slot->args = k->guard->argumentCount();
            // A composite operator (softmax.int, layer_norm) runs as its decomposition from the autograd
            // key down; in front of it is the only place to stand.
            const auto backendKey = spec.backend == "cpu" ? c10::DispatchKey::CPU : c10::DispatchKey::CUDA;
            slot->composite = handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)
                           && !handle->hasKernelForDispatchKey(backendKey);
            if (slot->composite && handle->hasKernelForDispatchKey(c10::DispatchKey::Autograd))
                throw refuse(spec.qualifiedOp() + " is composite but has an autograd kernel of its own");
        }
        slot->kernels.push_back(std::move(k));
    }
    // Everything loaded: only now does anything change in the dispatcher.
    std::map<std::pair<std::string, c10::DispatchKey>, torch::Library *> libs;
    for (const auto &s : loaded->slots) {
        const auto [ns, name] = splitName(s->op);
        std::set<c10::DispatchKey> keys;
        for (const auto &k : s->kernels)
            keys.insert(!s->composite ? c10::DispatchKey::BackendSelect
                        : k->spec.backend == "cpu" ? c10::DispatchKey::AutogradCPU : c10::DispatchKey::AutogradCUDA);
        for (const auto key : keys) {
            auto &lib = libs[{ns, key}];
            if (!lib) {
                loaded->libraries.push_back(std::make_unique<torch::Library>(torch::Library::IMPL, ns, key, __FILE__, __LINE__));
                lib = loaded->libraries.back().get();
            }
            lib->impl(name.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::make_unique<PackOperator>(s.get())));
        }
    }
    std::string summary = "loaded pack " + dir + ": " + std::to_string(manifest.kernels.size()) + " kernel(s) for";
    for (const auto &s : loaded->slots)
        summary += " " + s->op;
    g_packs.push_back(std::move(loaded));
    return summary;
}

void unloadPacks()
{
    std::lock_guard lock(g_mutex);
    g_packs.clear();
}

std::vector<OperatorCounters> counters()
{
    std::lock_guard lock(g_mutex);
    std::vector<OperatorCounters> out;
    for (const auto &p : g_packs)
        for (const auto &s : p->slots) {
            OperatorCounters c;
            c.op = s->op;
            c.taken = s->counters.taken.load();
            c.fellBack = s->counters.fellBack.load();
            std::lock_guard examples(s->counters.mutex);
            for (size_t i = 0; i < kKinds; ++i)
                if (const auto n = s->counters.why[i].load()) {
                    c.why[mismatchName(Mismatch(i))] = n;
                    c.example[mismatchName(Mismatch(i))] = s->counters.example[i];
                }
            out.push_back(std::move(c));
        }
    return out;
}

std::string countersJson()
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto &c : counters())
        j[c.op] = {{"taken", c.taken}, {"fell_back", c.fellBack}, {"why", c.why}, {"example", c.example}};
    return j.dump();
}

void resetCounters()
{
    std::lock_guard lock(g_mutex);
    for (const auto &p : g_packs)
        for (const auto &s : p->slots) {
            s->counters.taken = 0;
            s->counters.fellBack = 0;
            std::lock_guard examples(s->counters.mutex);
            for (size_t i = 0; i < kKinds; ++i) {
                s->counters.why[i] = 0;
                s->counters.example[i].clear();
            }
        }
}

} // namespace kforge::runtime

// Python: torch.ops.load_library(path) runs this registration.
TORCH_LIBRARY(kforge, m)
{
    m.def("load_pack(str path) -> str", [](std::string path) { return kforge::runtime::loadPack(path); });
    m.def("counters() -> str", [] { return kforge::runtime::countersJson(); });
    m.def("reset_counters() -> ()", [] { kforge::runtime::resetCounters(); });
    m.def("unload_packs() -> ()", [] { kforge::runtime::unloadPacks(); });
    // A saved TorchScript module (a model torch.jit.trace made, which FX cannot trace) rewritten to call the
    // fused operators and saved to `target`; returns how many chains its forward now runs fused.
    m.def("rewrite_fused_file(str source, str target) -> int", [](std::string source, std::string target) {
        auto module = torch::jit::load(source);
        const int64_t n = kforge::runtime::rewriteFusedPatterns(module);
        module.save(target);
        return n;
    });
    // The fused patterns (runtime/fused_ops.h): their own implementation is the chain they replace, so a
    // rewritten program computes the same without a pack, and a pack's kernel stands in front of it.
    m.def("scaled_softmax(Tensor x, float scale) -> Tensor");
    m.def("scaled_masked_softmax(Tensor x, float scale, Tensor mask) -> Tensor");
    m.def("scaled_softmax_native(Tensor x, float scale) -> Tensor");
    m.def("scaled_masked_softmax_native(Tensor x, float scale, Tensor mask) -> Tensor");
    m.def("scaled_softmax_native_traced(Tensor x, float scale) -> Tensor");
    m.def("scaled_masked_softmax_native_traced(Tensor x, float scale, Tensor mask) -> Tensor");
    m.def("scaled_softmax_native_div(Tensor x, float divisor) -> Tensor");
    m.def("scaled_masked_softmax_native_div(Tensor x, float divisor, Tensor mask) -> Tensor");
    m.def("scaled_softmax_native_div_traced(Tensor x, float divisor) -> Tensor");
    m.def("scaled_masked_softmax_native_div_traced(Tensor x, float divisor, Tensor mask) -> Tensor");
    m.def("masked_softmax_native_view(Tensor x, Tensor mask, int[] size) -> Tensor");
    m.def("scaled_softmax_to(Tensor x, float scale, Tensor? mask, ScalarType dtype, bool tensor_scale) -> Tensor");
    m.def("silu_mul(Tensor gate, Tensor up) -> Tensor");
    m.def("gelu_tanh_mul(Tensor gate, Tensor up) -> Tensor");
    m.def("gelu_mul(Tensor gate, Tensor up) -> Tensor");
    m.def("gelu_new(Tensor x) -> Tensor");
    m.def("gelu_new_mul(Tensor gate, Tensor up) -> Tensor");
    m.def("quick_gelu(Tensor x) -> Tensor");
    m.def("rms_norm_offset(Tensor x, Tensor weight, float eps) -> Tensor");
    m.def("rms_norm_offset_heads(Tensor x, Tensor weight, float eps) -> Tensor");
    m.def("add_rms_norm_offset(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)");
    m.def("rms_norm_offset_to(Tensor x, Tensor weight, float eps, ScalarType dtype) -> Tensor");
    m.def("add_rms_norm_offset_to(Tensor x, Tensor residual, Tensor weight, float eps, ScalarType dtype) -> (Tensor, Tensor)");
    m.def("rms_norm_cast(Tensor x, Tensor weight, float eps) -> Tensor");
    m.def("add_rms_norm_cast(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)");
    m.def("rms_norm_cast_to(Tensor x, Tensor weight, float eps, ScalarType dtype) -> Tensor");
    m.def("add_rms_norm_cast_to(Tensor x, Tensor residual, Tensor weight, float eps, ScalarType dtype) -> (Tensor, Tensor)");
    m.def("rotary_embedding(Tensor x, Tensor cos, Tensor sin, int half) -> Tensor");
    m.def("rotary_embedding_sliced(Tensor x, Tensor cos, Tensor sin, int dim, int half, int back_dim, int back) -> Tensor");
    m.def("rotary_embedding_heads(Tensor q, Tensor cos, Tensor sin, int dim, int half, int back_dim, int back) -> Tensor");
}

TORCH_LIBRARY_IMPL(kforge, CompositeExplicitAutograd, m)
{
    m.impl("scaled_softmax", [](const at::Tensor &x, double scale) { return kforge::runtime::scaledSoftmaxChain(x, scale); });
    m.impl("scaled_masked_softmax",
           [](const at::Tensor &x, double scale, const at::Tensor &mask) { return kforge::runtime::scaledMaskedSoftmaxChain(x, scale, mask); });
    m.impl("scaled_softmax_native", [](const at::Tensor &x, double scale) { return kforge::runtime::scaledSoftmaxNativeChain(x, scale); });
    m.impl("scaled_masked_softmax_native",
           [](const at::Tensor &x, double scale, const at::Tensor &mask) { return kforge::runtime::scaledMaskedSoftmaxNativeChain(x, scale, mask); });
    m.impl("scaled_softmax_native_traced", [](const at::Tensor &x, double scale) { return kforge::runtime::scaledSoftmaxTracedChain(x, scale); });
    m.impl("scaled_masked_softmax_native_traced",
           [](const at::Tensor &x, double scale, const at::Tensor &mask) { return kforge::runtime::scaledMaskedSoftmaxTracedChain(x, scale, mask); });
    using kforge::runtime::ScaleBy;
    m.impl("scaled_softmax_native_div",
           [](const at::Tensor &x, double divisor) { return kforge::runtime::scaledSoftmaxNativeChain(x, divisor, ScaleBy::Divide); });
    m.impl("scaled_masked_softmax_native_div", [](const at::Tensor &x, double divisor, const at::Tensor &mask) {
        return kforge::runtime::scaledMaskedSoftmaxNativeChain(x, divisor, mask, ScaleBy::Divide);
    });
    m.impl("scaled_softmax_native_div_traced",
           [](const at::Tensor &x, double divisor) { return kforge::runtime::scaledSoftmaxTracedChain(x, divisor, ScaleBy::Divide); });
    m.impl("scaled_masked_softmax_native_div_traced", [](const at::Tensor &x, double divisor, const at::Tensor &mask) {
        return kforge::runtime::scaledMaskedSoftmaxTracedChain(x, divisor, mask, ScaleBy::Divide);
    });
    m.impl("masked_softmax_native_view", [](const at::Tensor &x, const at::Tensor &mask, c10::IntArrayRef size) {
        return kforge::runtime::maskedSoftmaxNativeView(x, mask, size);
    });
    m.impl("scaled_softmax_to", [](const at::Tensor &x, double scale, const c10::optional<at::Tensor> &mask, at::ScalarType dtype, bool tensorScale) {
        return kforge::runtime::scaledSoftmaxTo(x, scale, mask, dtype, tensorScale);
    });
    m.impl("silu_mul", [](const at::Tensor &gate, const at::Tensor &up) { return kforge::runtime::siluMulChain(gate, up); });
    m.impl("gelu_tanh_mul", [](const at::Tensor &gate, const at::Tensor &up) { return kforge::runtime::geluMulChain(gate, up, "tanh"); });
    m.impl("gelu_mul", [](const at::Tensor &gate, const at::Tensor &up) { return kforge::runtime::geluMulChain(gate, up, "none"); });
    m.impl("gelu_new", [](const at::Tensor &x) { return kforge::runtime::geluNewChain(x); });
    m.impl("gelu_new_mul", [](const at::Tensor &gate, const at::Tensor &up) { return kforge::runtime::geluNewMulChain(gate, up); });
    m.impl("quick_gelu", [](const at::Tensor &x) { return kforge::runtime::quickGeluChain(x); });
    m.impl("rms_norm_offset",
           [](const at::Tensor &x, const at::Tensor &weight, double eps) { return kforge::runtime::rmsNormOffsetChain(x, weight, eps); });
    m.impl("rms_norm_offset_heads",
           [](const at::Tensor &x, const at::Tensor &weight, double eps) { return kforge::runtime::rmsNormOffsetHeads(x, weight, eps); });
    m.impl("add_rms_norm_offset", [](const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps) {
        return kforge::runtime::addRmsNormOffsetChain(x, residual, weight, eps);
    });
    m.impl("rms_norm_offset_to", [](const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype) {
        return kforge::runtime::rmsNormOffsetTo(x, weight, eps, dtype);
    });
    m.impl("add_rms_norm_offset_to", [](const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps, at::ScalarType dtype) {
        return kforge::runtime::addRmsNormOffsetTo(x, residual, weight, eps, dtype);
    });
    m.impl("rms_norm_cast",
           [](const at::Tensor &x, const at::Tensor &weight, double eps) { return kforge::runtime::rmsNormCastChain(x, weight, eps); });
    m.impl("add_rms_norm_cast", [](const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps) {
        return kforge::runtime::addRmsNormCastChain(x, residual, weight, eps);
    });
    m.impl("rms_norm_cast_to", [](const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype) {
        return kforge::runtime::rmsNormCastTo(x, weight, eps, dtype);
    });
    m.impl("add_rms_norm_cast_to", [](const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps, at::ScalarType dtype) {
        return kforge::runtime::addRmsNormCastTo(x, residual, weight, eps, dtype);
    });
    m.impl("rotary_embedding", [](const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t half) {
        return kforge::runtime::rotaryChain(x, cos, sin, half);
    });
    m.impl("rotary_embedding_heads",
           [](const at::Tensor &q, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back) {
               return kforge::runtime::rotaryHeads(q, cos, sin, dim, half, backDim, back);
           });
    m.impl("rotary_embedding_sliced",
           [](const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back) {
               return kforge::runtime::rotarySliced(x, cos, sin, dim, half, backDim, back);
           });
}
