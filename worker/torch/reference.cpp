#include "worker/torch/reference.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>

#include "util/error.h"

namespace kforge::worker {

at::ScalarType scalarType(DType t)
{
    switch (t) {
    case DType::F32: return at::kFloat;
    case DType::F16: return at::kHalf;
    case DType::BF16: return at::kBFloat16;
    case DType::F64: return at::kDouble;
    case DType::I64: return at::kLong;
    case DType::I32: return at::kInt;
    }
    return at::kFloat;
}

std::string shapeString(const OperatorCard &card, const ShapeBindings &shape)
{
    std::string s;
    for (int64_t d : card.sizes(card.inputs.front(), shape))
        s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
}

std::vector<at::Tensor> makeInputs(const OperatorCard &card, const ShapeBindings &shape, double scale, at::Device device)
{
    std::vector<at::Tensor> out;
    for (const auto &t : card.inputs) {
        const auto sizes = card.sizes(t, shape);
        const auto type = scalarType(t.dtype);
        if (at::isFloatingType(type))
            out.push_back((at::randn(sizes, at::TensorOptions().dtype(at::kFloat).device(device)) * scale).to(type));
        else
            out.push_back(at::randint(0, std::max<int64_t>(2, int64_t(scale)), sizes, at::TensorOptions().dtype(type).device(device)));
    }
    return out;
}

std::vector<at::Tensor> makeOutputs(const OperatorCard &card, const ShapeBindings &shape, at::Device device)
{
    std::vector<at::Tensor> out;
    for (const auto &t : card.outputs)
        out.push_back(at::empty(card.sizes(t, shape), at::TensorOptions().dtype(scalarType(t.dtype)).device(device)));
    return out;
}

std::vector<at::Tensor> callReference(const OperatorCard &card, const std::vector<at::Tensor> &inputs)
{
    auto handle = c10::Dispatcher::singleton().findSchema({card.atenOp, card.atenOverload});
    if (!handle)
        throw Error("the reference operator " + card.atenOp + (card.atenOverload.empty() ? "" : "." + card.atenOverload)
                    + " is not known to this libtorch");
    torch::jit::Stack stack;
    for (const auto &a : card.referenceArgs) {
        if (a.contains("input")) {
            const auto i = a["input"].get<size_t>();
            if (i >= inputs.size())
                throw Error("operator card '" + card.key + "': reference argument names input " + std::to_string(i)
                            + " but the card has " + std::to_string(inputs.size()));
            stack.emplace_back(inputs[i]);
        } else if (a.contains("int"))
            stack.emplace_back(a["int"].get<int64_t>());
        else if (a.contains("bool"))
            stack.emplace_back(a["bool"].get<bool>());
        else if (a.contains("double"))
            stack.emplace_back(a["double"].get<double>());
        else if (a.contains("none"))
            stack.emplace_back();
        else
            throw Error("operator card '" + card.key + "': reference argument " + a.dump() + " is not understood");
    }
    handle->callBoxed(&stack);
    std::vector<at::Tensor> out;
    for (const auto &v : stack)
        if (v.isTensor())
            out.push_back(v.toTensor());
    if (out.size() != card.outputs.size())
        throw Error("the reference " + card.atenOp + " returned " + std::to_string(out.size()) + " tensors; the card expects "
                    + std::to_string(card.outputs.size()));
    return out;
}

} // namespace kforge::worker
