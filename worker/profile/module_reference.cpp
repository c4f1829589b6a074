#include "worker/profile/module_reference.h"

#include <torch/script.h>
#include <c10/util/accumulate.h>

#include <map>
#include <mutex>

#include "util/error.h"
#include "util/text.h"
#include "worker/profile/float64_module.h"
#include "worker/profile/model_inputs.h"

namespace kforge::worker {

namespace {

std::mutex g_mutex;
std::map<std::string, torch::jit::Module> g_modules; // "path|dtype|device"

torch::jit::Module &moduleFor(const OperatorCard &card, const std::string &path, at::ScalarType type, at::Device device)
{
    const auto key = path + "|" + c10::toString(type) + "|" + device.str();
    auto it = g_modules.find(key);
    if (it != g_modules.end())
        return it->second;
    torch::jit::Module m;
    try {
        m = torch::jit::load(path, device);
    } catch (const std::exception &e) {
        throw Error("operator card '" + card.key + "': cannot load its problem module " + path + ": " + firstLines(e.what(), 1));
    }
    m.eval();
    if (type == at::kDouble)
        retargetFloatingDtypes(m, type); // a trace's dtype constants too (worker/profile/float64_module.h)
    m.to(type);
    return g_modules.emplace(key, std::move(m)).first->second;
}

} // namespace

std::vector<at::Tensor> callModuleReference(const OperatorCard &card, const std::vector<at::Tensor> &inputs)
{
    const auto &args = card.referenceArgs;
    if (!args.is_array() || args.size() < 2 || !args[0].contains("module") || !args[1].contains("shapes"))
        throw Error("operator card '" + card.key + "': a module reference takes [{\"module\": PATH}, {\"shapes\": [...]}]");
    const auto path = args[0]["module"].get<std::string>();
    const auto shapes = args[1]["shapes"].get<std::vector<std::vector<int64_t>>>();
    if (inputs.empty())
        throw Error("operator card '" + card.key + "': its module reference got no inputs");
    at::ScalarType type = at::kFloat;
    for (const auto &t : inputs)
        if (at::isFloatingType(t.scalar_type())) {
            type = t.scalar_type();
            break;
        }
    // The card's inputs in the shapes the forward was captured with, where the element counts agree.
    std::vector<c10::IValue> stack;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const auto &t = inputs[i];
        if (i < shapes.size() && t.numel() == c10::multiply_integers(shapes[i]))
            stack.emplace_back(t.reshape(shapes[i]));
        else
            stack.emplace_back(t);
    }
    c10::IValue result;
    {
        std::lock_guard lock(g_mutex);
        auto &module = moduleFor(card, path, type, inputs[0].device());
        torch::NoGradGuard noGrad;
        // As eager PyTorch runs the forward, call by call: TorchScript's fuser would otherwise merge a
        // pointwise chain into one kernel, and the baseline a problem's kernel must beat (and the
        // speedup over eager it reports) would not be eager's.
        AsWrittenExecution asWritten;
        try {
            result = module.forward(stack);
        } catch (const std::exception &e) {
            throw Error("operator card '" + card.key + "': the problem's forward failed: " + firstLines(e.what(), 2));
        }
    }
    std::vector<at::Tensor> outs;
    if (result.isTensor())
        outs.push_back(result.toTensor());
    else if (result.isTuple())
        for (const auto &v : result.toTupleRef().elements())
            if (v.isTensor())
                outs.push_back(v.toTensor());
    if (outs.size() != card.outputs.size())
        throw Error("operator card '" + card.key + "': the problem's forward returned " + std::to_string(outs.size())
                    + " tensors; the card expects " + std::to_string(card.outputs.size()));
    // The card's shapes, with its symbols bound by the inputs it was given (held-out shapes differ).
    ShapeBindings b = card.shape;
    for (size_t i = 0; i < card.inputs.size() && i < inputs.size(); ++i)
        for (size_t d = 0; d < card.inputs[i].dims.size() && int64_t(d) < inputs[i].dim(); ++d)
            b[card.inputs[i].dims[d]] = inputs[i].size(int64_t(d));
    for (size_t i = 0; i < outs.size(); ++i) {
        const auto sizes = card.sizes(card.outputs[i], b);
        if (outs[i].numel() == c10::multiply_integers(sizes))
            outs[i] = outs[i].reshape(sizes);
        outs[i] = outs[i].contiguous();
    }
    return outs;
}

} // namespace kforge::worker
