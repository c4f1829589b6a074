#include "workload/pointwise_fusion.h"

#include "ops/pointwise_ops.h"
#include "util/error.h"

namespace kforge {

std::optional<Expression> fusePointwiseGraph(const TracedGraph &g, const std::vector<std::string> &inputNames, std::string *why)
{
    auto fail = [&](const std::string &reason) -> std::optional<Expression> {
        if (why)
            *why = reason;
        return std::nullopt;
    };
    if (!g.unreadable.empty())
        return fail(g.unreadable);
    if (g.outputs.size() != 1)
        return fail("the forward returns " + std::to_string(g.outputs.size()) + " values, not one tensor");
    std::vector<std::optional<Expression>> values; // each node's output as an expression, once computed
    auto valueOf = [&](const TracedValue &v, std::string &bad) -> PointwiseArg {
        if (v.from == TracedValue::From::Input) {
            if (v.index < 0 || size_t(v.index) >= inputNames.size()) {
                bad = "reads input " + std::to_string(v.index) + " of " + std::to_string(inputNames.size());
                return {};
            }
            return {Expression::variable(inputNames[size_t(v.index)]), nullptr};
        }
        if (v.from == TracedValue::From::Node) {
            if (v.index < 0 || size_t(v.index) >= values.size() || !values[size_t(v.index)]) {
                bad = "reads node " + std::to_string(v.index) + ", which is not an earlier pointwise node";
                return {};
            }
            return {values[size_t(v.index)], nullptr};
        }
        return {std::nullopt, v.constant};
    };
    // Only nodes the output depends on need to be pointwise.
    std::vector<bool> needed(g.nodes.size(), false);
    auto mark = [&](const TracedValue &v) {
        if (v.from == TracedValue::From::Node && v.index >= 0 && size_t(v.index) < needed.size())
            needed[size_t(v.index)] = true;
    };
    mark(g.outputs.front());
    for (size_t i = g.nodes.size(); i-- > 0;)
        if (needed[i])
            for (const auto &v : g.nodes[i].inputs)
                mark(v);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        values.emplace_back();
        if (!needed[i])
            continue;
        std::vector<PointwiseArg> args;
        std::string bad;
        for (const auto &v : g.nodes[i].inputs) {
            args.push_back(valueOf(v, bad));
            if (!bad.empty())
                return fail("node " + std::to_string(i) + " (" + g.nodes[i].op + ") " + bad);
        }
        std::string reason;
        auto e = pointwiseOfCall(g.nodes[i].op, args, &reason);
        if (!e)
            return fail("node " + std::to_string(i) + ": " + reason);
        values.back() = std::move(e);
    }
    const auto &out = g.outputs.front();
    if (out.from != TracedValue::From::Node)
        return fail("the forward returns an input or a constant, not a computed tensor");
    std::string bad;
    auto result = valueOf(out, bad);
    if (!bad.empty() || !result.tensor)
        return fail("the output " + bad);
    return result.tensor;
}

} // namespace kforge
