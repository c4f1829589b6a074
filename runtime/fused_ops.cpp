#include "runtime/fused_ops.h"

#include <optional>

#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/subgraph_matcher.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/subgraph_rewrite.h>

namespace kforge::runtime {

at::Tensor scaledSoftmaxChain(const at::Tensor &x, double scale, at::ScalarType compute)
{
    return at::softmax((x * scale).to(compute), -1).to(x.scalar_type());
}

at::Tensor scaledMaskedSoftmaxChain(const at::Tensor &x, double scale, const at::Tensor &mask, at::ScalarType compute)
{
    return at::softmax((x * scale + mask).to(compute), -1).to(x.scalar_type());
}

namespace {

// The chains as the TorchScript frontend writes `torch.softmax((s * c [+ m]).float(), -1).to(q.dtype)`:
// the float32 cast is aten::to with dtype 6, the final cast aten::to with a dtype value. The pattern's
// free values (the scale, the mask, the dtypes, the flags) match anything; the replacement keeps the
// original calls' meaning only when they are what the fused operator assumes, so the rewrite checks
// them on each match (see the filter below).
const char *kMaskedPattern = R"(
graph(%x, %scale, %mask, %alpha, %f32, %nb1, %cp1, %mf1, %dim, %sdt, %odt, %nb2, %cp2, %mf2):
  %s = aten::mul(%x, %scale)
  %t = aten::add(%s, %mask, %alpha)
  %u = aten::to(%t, %f32, %nb1, %cp1, %mf1)
  %p = aten::softmax(%u, %dim, %sdt)
  %y = aten::to(%p, %odt, %nb2, %cp2, %mf2)
  return (%y))";
const char *kMaskedReplacement = R"(
graph(%x, %scale, %mask, %alpha, %f32, %nb1, %cp1, %mf1, %dim, %sdt, %odt, %nb2, %cp2, %mf2):
  %y = kforge::scaled_masked_softmax(%x, %scale, %mask)
  return (%y))";
const char *kPlainPattern = R"(
graph(%x, %scale, %f32, %nb1, %cp1, %mf1, %dim, %sdt, %odt, %nb2, %cp2, %mf2):
  %s = aten::mul(%x, %scale)
  %u = aten::to(%s, %f32, %nb1, %cp1, %mf1)
  %p = aten::softmax(%u, %dim, %sdt)
  %y = aten::to(%p, %odt, %nb2, %cp2, %mf2)
  return (%y))";
const char *kPlainReplacement = R"(
graph(%x, %scale, %f32, %nb1, %cp1, %mf1, %dim, %sdt, %odt, %nb2, %cp2, %mf2):
  %y = kforge::scaled_softmax(%x, %scale)
  return (%y))";

std::optional<c10::IValue> constantOf(const torch::jit::Value *v)
{
    if (!v)
        return std::nullopt;
    const auto c = torch::jit::toIValue(v);
    return c ? std::optional<c10::IValue>(*c) : std::nullopt;
}

// A match is the fused operator's meaning only when: the scale is a constant number, the first cast is
// to float32 and the softmax is over the last dimension with no dtype of its own, the add's alpha is 1,
// the final cast is to x's own dtype (prim::dtype of x, or a constant equal to it), and no cast copies
// or changes the memory format. Anything else stays as the model wrote it.
bool fusable(const torch::jit::Match &m, const std::unordered_map<std::string, torch::jit::Value *> &vars)
{
    const auto get = [&](const char *name) -> torch::jit::Value * {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : m.values_map.at(it->second);
    };
    const auto scale = constantOf(get("scale"));
    if (!scale || !(scale->isDouble() || scale->isInt()))
        return false;
    const auto f32 = constantOf(get("f32"));
    if (!f32 || !f32->isInt() || f32->toInt() != int64_t(at::kFloat))
        return false;
    const auto dim = constantOf(get("dim"));
    if (!dim || !dim->isInt() || dim->toInt() != -1)
        return false;
    const auto sdt = constantOf(get("sdt"));
    if (!sdt || !sdt->isNone())
        return false;
    if (vars.count("alpha")) {
        const auto alpha = constantOf(get("alpha"));
        if (!alpha || !((alpha->isInt() && alpha->toInt() == 1) || (alpha->isDouble() && alpha->toDouble() == 1.0)))
            return false;
    }
    for (const char *flag : {"nb1", "cp1", "nb2", "cp2"}) {
        const auto f = constantOf(get(flag));
        if (!f || !f->isBool() || f->toBool())
            return false;
    }
    for (const char *mf : {"mf1", "mf2"}) {
        const auto f = constantOf(get(mf));
        if (!f || !f->isNone())
            return false;
    }
    // The output dtype: x's own, as `.to(q.dtype)` reads it from a tensor of x's dtype. Only
    // prim::dtype of x itself is certain from the graph alone; any other source is left alone.
    const auto *odt = get("odt");
    const auto *x = get("x");
    if (!odt || odt->node()->kind() != c10::Symbol::fromQualString("prim::dtype"))
        return false;
    const auto *src = odt->node()->input(0);
    if (src == x)
        return true;
    // `.to(q.dtype)` with s = q @ k^T * scale: q and x are both outputs of bf16 math; accept a dtype taken
    // from an input of the matmul that produced x.
    const auto *producer = x->node();
    if (producer->kind() == c10::Symbol::fromQualString("aten::matmul"))
        for (const auto *in : producer->inputs())
            if (in == src)
                return true;
    return false;
}

} // namespace

int rewriteFusedPatterns(torch::jit::Module &module)
{
    int replaced = 0;
    const auto countIn = [](const std::shared_ptr<torch::jit::Graph> &g, const char *name) {
        int n = 0;
        const auto sym = c10::Symbol::fromQualString(name);
        for (const auto *node : g->nodes())
            if (node->kind() == sym)
                ++n;
        return n;
    };
    for (auto m : module.modules())
        for (auto &method : m.get_methods()) {
            auto g = method.graph();
            torch::jit::Inline(*g);
            const int before = countIn(g, "kforge::scaled_masked_softmax") + countIn(g, "kforge::scaled_softmax");
            for (const auto &[pattern, replacement] : {std::pair{kMaskedPattern, kMaskedReplacement}, std::pair{kPlainPattern, kPlainReplacement}}) {
                torch::jit::SubgraphRewriter rw;
                rw.RegisterRewritePattern(pattern, replacement);
                rw.runOnGraph(g, fusable);
            }
            replaced += countIn(g, "kforge::scaled_masked_softmax") + countIn(g, "kforge::scaled_softmax") - before;
        }
    return replaced;
}

} // namespace kforge::runtime
