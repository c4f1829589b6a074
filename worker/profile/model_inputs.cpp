#include "worker/profile/model_inputs.h"

#include <torch/csrc/jit/passes/tensorexpr_fuser.h>

#include "util/error.h"
#include "util/text.h"
#include "worker/torch/reference.h"

namespace kforge::worker {

namespace {

at::ScalarType scalarTypeOf(const std::string &dtype, const std::string &where)
{
    if (dtype == "bool")
        return at::kBool;
    if (dtype == "uint8")
        return at::kByte;
    try {
        return scalarType(dtypeFromName(dtype));
    } catch (const Error &) {
        throw Error(where + ": this worker cannot make " + dtype + " inputs");
    }
}

} // namespace

torch::jit::Module loadModule(const std::string &path, const std::string &what)
{
    try {
        return torch::jit::load(path);
    } catch (const c10::Error &e) {
        throw Error("cannot load " + what + " " + path + " as TorchScript: " + firstLines(e.what_without_backtrace(), 1));
    } catch (const std::exception &e) {
        throw Error("cannot load " + what + " " + path + " as TorchScript: " + firstLines(e.what(), 1));
    }
}

std::vector<c10::IValue> makeModelInputs(const WorkloadFile &w, at::Device device)
{
    std::vector<c10::IValue> out;
    if (!w.capturedInputs.empty()) {
        auto holder = loadModule(w.resolve(w.capturedInputs), "the captured inputs");
        for (int i = 0;; ++i) {
            const auto name = "i" + std::to_string(i);
            if (!holder.hasattr(name))
                break;
            auto v = holder.attr(name);
            out.push_back(v.isTensor() ? c10::IValue(v.toTensor().to(device)) : v);
        }
        if (out.empty())
            throw Error("the captured inputs " + w.capturedInputs + " hold no tensors i0, i1, ...");
        return out;
    }
    at::manual_seed(w.seed);
    for (size_t i = 0; i < w.inputs.size(); ++i) {
        const auto &s = w.inputs[i];
        const auto type = scalarTypeOf(s.dtype, "inputs.tensors[" + std::to_string(i) + "]");
        // Drawn on the device they are for: a CPU draw of a KernelBench-sized input takes seconds.
        const auto opts = at::TensorOptions().dtype(type).device(device);
        const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
        if (s.init == "randn")
            out.emplace_back(at::randn(s.shape, f32).to(type));
        else if (s.init == "rand")
            out.emplace_back(at::rand(s.shape, f32).to(type));
        else if (s.init == "zeros")
            out.emplace_back(at::zeros(s.shape, opts));
        else if (s.init == "ones")
            out.emplace_back(at::ones(s.shape, opts));
        else { // randint:LO:HI
            const auto a = s.init.find(':'), b = s.init.find(':', a + 1);
            int64_t lo = 0, hi = 0;
            try {
                lo = std::stoll(s.init.substr(a + 1, b - a - 1));
                hi = std::stoll(s.init.substr(b + 1));
            } catch (...) {
                throw Error("inputs.tensors[" + std::to_string(i) + "].init: randint takes randint:LO:HI, not '" + s.init + "'");
            }
            out.emplace_back(at::randint(lo, hi, s.shape, opts));
        }
    }
    return out;
}

at::Device profilingDevice(const std::string &name)
{
    if (name == "cpu")
        return at::kCPU;
    if (name == "cuda") {
        if (!at::hasCUDA())
            throw Error("device cuda: this worker's libtorch has no CUDA device (profile with device cpu)");
        return at::Device(at::kCUDA, 0);
    }
    if (name == "auto" || name.empty())
        return at::hasCUDA() ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
    throw Error("device is cpu, cuda or auto, not '" + name + "'");
}

AsWrittenExecution::AsWrittenExecution() : m_fuserWas(torch::jit::tensorExprFuserEnabled())
{
    torch::jit::setTensorExprFuserEnabled(false);
}

AsWrittenExecution::~AsWrittenExecution()
{
    torch::jit::setTensorExprFuserEnabled(m_fuserWas);
}

} // namespace kforge::worker
