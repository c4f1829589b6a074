#include "worker/profile/traced_graph.h"

#include <unordered_map>

#include <torch/csrc/jit/passes/inliner.h>

namespace kforge::worker {

namespace {

// A constant's value: a number, bool, string or null; a one-element tensor (Python's wrapped numbers:
// `0.5 * x` traces as a 0-dim tensor constant) is its number. Anything else stays an object that no
// pointwise rule reads as a number.
nlohmann::json constantOf(const c10::IValue &v)
{
    if (v.isTensor()) {
        const auto t = v.toTensor();
        if (t.numel() == 1)
            return t.item<double>();
        return {{"tensor", t.sizes().vec()}};
    }
    if (v.isDouble())
        return v.toDouble();
    if (v.isInt())
        return v.toInt();
    if (v.isBool())
        return v.toBool();
    if (v.isString())
        return v.toStringRef();
    if (v.isNone())
        return nullptr;
    return {{"value", v.tagKind()}};
}

} // namespace

TracedGraph tracedGraphOf(torch::jit::Module &module)
{
    TracedGraph g;
    try {
        auto graph = module.get_method("forward").graph()->copy();
        torch::jit::Inline(*graph);
        std::unordered_map<const torch::jit::Value *, TracedValue> values;
        const auto inputs = graph->inputs();
        for (size_t i = 1; i < inputs.size(); ++i) // input 0 is the module itself
            values[inputs[i]] = {TracedValue::From::Input, int(i - 1), nullptr};
        for (auto *node : graph->nodes()) {
            if (node->kind() == c10::prim::Constant) {
                const auto v = torch::jit::toIValue(node->output());
                values[node->output()] = {TracedValue::From::Constant, 0, v ? constantOf(*v) : nlohmann::json{{"value", "unreadable"}}};
                continue;
            }
            TracedNode n;
            const auto *schema = node->maybeSchema();
            n.op = schema ? schema->name() + (schema->overload_name().empty() ? "" : "." + schema->overload_name()) : node->kind().toQualString();
            for (const auto *in : node->inputs()) {
                const auto it = values.find(in);
                n.inputs.push_back(it != values.end() ? it->second : TracedValue{TracedValue::From::Constant, 0, {{"value", "unknown"}}});
            }
            // Every output of the node is the node: only single-output pointwise calls are ever fused.
            for (const auto *out : node->outputs())
                values[out] = {TracedValue::From::Node, int(g.nodes.size()), nullptr};
            g.nodes.push_back(std::move(n));
        }
        for (const auto *out : graph->outputs()) {
            const auto it = values.find(out);
            if (it == values.end()) {
                g.unreadable = "the forward's output is not a value of its graph";
                break;
            }
            g.outputs.push_back(it->second);
        }
    } catch (const std::exception &e) {
        g.unreadable = std::string("the forward's graph could not be read: ") + e.what();
    }
    return g;
}

} // namespace kforge::worker
