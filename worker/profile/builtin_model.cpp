#include "worker/profile/builtin_model.h"

#include <torch/script.h>

#include <cstdio>
#include <limits>

#include "protocol/messages.h"
#include "util/error.h"
#include "util/host_memory.h"
#include "util/text.h"
#include "workload/builtin_models.h"

namespace kforge::worker {

namespace {

at::ScalarType modelType(const std::string &dtype)
{
    if (dtype == "float16")
        return at::kHalf;
    if (dtype == "bfloat16")
        return at::kBFloat16;
    return at::kFloat;
}

double lowestOf(at::ScalarType t)
{
    if (t == at::kHalf)
        return -65504.0;
    if (t == at::kBFloat16)
        return -3.3895313892515355e38; // the largest finite bfloat16, exact in float32
    return double(std::numeric_limits<float>::lowest());
}

double after(const std::string &init, const std::string &prefix)
{
    return std::stod(init.substr(prefix.size()));
}

// Made in float32 on the CPU from the seeded generator, in the model's order, then cast: the same
// weights whatever the dtype's rounding.
at::Tensor makeTensor(const BuiltinTensor &t, at::ScalarType type)
{
    const auto f32 = at::TensorOptions().dtype(at::kFloat);
    at::Tensor x;
    if (t.init.rfind("normal:", 0) == 0)
        x = at::randn(t.shape, f32) * after(t.init, "normal:");
    else if (t.init == "ones")
        x = at::ones(t.shape, f32);
    else if (t.init == "zeros")
        x = at::zeros(t.shape, f32);
    else if (t.init == "causal_mask")
        x = at::full(t.shape, lowestOf(type), f32).triu(1);
    else if (t.init.rfind("rope_cos:", 0) == 0 || t.init.rfind("rope_sin:", 0) == 0) {
        const int64_t positions = t.shape.at(0), dim = t.shape.at(1);
        const double theta = after(t.init, "rope_cos:");
        const auto invFreq = 1.0 / at::pow(theta, at::arange(0, dim, 2, f32) / double(dim));
        const auto freqs = at::outer(at::arange(positions, f32), invFreq);
        const auto emb = at::cat({freqs, freqs}, -1);
        x = t.init[5] == 'c' ? emb.cos() : emb.sin();
    } else {
        throw Error("built-in tensor " + t.name + ": unknown init '" + t.init + "'");
    }
    return x.to(type).contiguous();
}

// The model's tensors are made, then serialized beside them: refused up front when that is more than
// this host has available (a typo such as hidden=65536 would otherwise end in the kernel's OOM killer).
void refuseBeyondMemory(const BuiltinModel &m, int64_t elementBytes)
{
    const double bytes = double(m.elements()) * double(elementBytes);
    const double available = double(availableHostMemory());
    if (available > 0 && 2 * bytes > available) {
        char buf[160];
        std::snprintf(buf, sizeof buf, " holds %.1f GB of parameters and buffers (twice that while it is saved); this host has %.1f GB available",
                      bytes / 1e9, available / 1e9);
        throw Error("the built-in model " + m.summary() + buf + ": choose smaller options");
    }
}

} // namespace

nlohmann::json buildModelReply(const nlohmann::json &id, const nlohmann::json &req)
{
    BuiltinModel m;
    std::string name, path;
    std::map<std::string, std::string> options;
    try {
        if (req.contains("options"))
            for (const auto &[k, v] : req.at("options").items())
                options[k] = v.is_string() ? v.get<std::string>() : v.dump();
        name = req.at("model").get<std::string>();
        path = req.at("path").get<std::string>();
    } catch (const std::exception &e) {
        return errorReply(id, std::string("malformed build_model request: ") + e.what());
    }
    try {
        m = makeBuiltinModel(name, options);
        const auto type = modelType(m.dtype);
        refuseBeyondMemory(m, int64_t(c10::elementSize(type)));
        torch::NoGradGuard noGrad;
        at::manual_seed(m.seed);
        torch::jit::Module module("kforge_" + m.name);
        int64_t bytes = 0;
        for (const auto &t : m.tensors) {
            auto x = makeTensor(t, type);
            bytes += int64_t(x.nbytes());
            if (t.buffer)
                module.register_buffer(t.name, x);
            else
                module.register_parameter(t.name, x, /*is_buffer=*/false);
        }
        try {
            module.define(m.source);
        } catch (const std::exception &e) {
            throw Error("the built-in model " + m.name + "'s TorchScript does not compile with this libtorch: " + firstLines(e.what(), 6));
        }
        module.eval();
        try {
            module.save(path);
        } catch (const std::exception &e) {
            throw Error("cannot write the model to " + path + ": " + firstLines(e.what(), 1));
        }
        return {{"id", id}, {"type", "model_built"}, {"ok", true}, {"path", path}, {"parameters", m.parameterCount()},
                {"bytes", bytes}, {"summary", m.summary()}};
    } catch (const std::exception &e) {
        return errorReply(id, e.what());
    }
}

} // namespace kforge::worker
