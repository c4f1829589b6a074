// The pointwise templates: one CUDA and one CPU kernel for every pointwise family (the activations of
// core/ops/pointwise_ops.h and a problem's fused chain, family "pointwise"), each rendering the card's
// expression as KF_EXPR over the inputs' values. Registered under each family's name so that
// `cuda.silu.grid_stride` and `cpu.silu.rows` keep their ids.
#include <set>
#include <string>

#include "ops/expression.h"
#include "ops/pointwise_ops.h"
#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"
#include "util/error.h"

namespace kforge {

namespace {

using J = nlohmann::json;

constexpr size_t kMaxInputs = 4; // the CUDA kernel's pointer arguments

std::vector<std::string> inputNames(const OperatorCard &card)
{
    std::vector<std::string> names;
    for (const auto &t : card.inputs)
        names.push_back(t.name);
    return names;
}

// A card the templates serve: an expression over its inputs, every tensor of the output's shape and dtype.
bool servable(const OperatorCard &card, const std::string &backend)
{
    if (card.expression.empty() || card.inputs.empty() || card.inputs.size() > kMaxInputs || card.outputs.size() != 1)
        return false;
    const auto &y = card.outputs.front();
    for (const auto &t : card.inputs)
        if (t.dims != y.dims || t.dtype != y.dtype)
            return false;
    if (backend == "cpu" ? y.dtype != DType::F32 : !(y.dtype == DType::F32 || y.dtype == DType::F16 || y.dtype == DType::BF16))
        return false;
    try {
        Expression::parse(card.expression, inputNames(card));
    } catch (const Error &) {
        return false;
    }
    return true;
}

// "#define KF_NIN n" and KF_EXPR(v): the card's expression over v[0..n-1], the inputs in card order.
std::string expressionDefines(const OperatorCard &card, Expression::Target target)
{
    const auto names = inputNames(card);
    std::map<std::string, std::string> values;
    for (size_t i = 0; i < names.size(); ++i)
        values[names[i]] = "(v)[" + std::to_string(i) + "]";
    const auto e = Expression::parse(card.expression, names);
    return "// expression: " + e.text() + "\n" + defineLine("KF_NIN", std::to_string(names.size()))
           + "#define KF_EXPR(v) " + e.render(target, values) + "\n";
}

// Whether the expression calls a function of many instructions (an exp, a log, erf, tanh, a power):
// then one pack per thread leaves too few loads in flight while it computes, and the seed takes two.
// Measured on the H200 at 4096 x 393216 float32: softplus 3389 -> 3100 us, GELU 3174 -> 3096, SiLU
// 3420 -> 3091 with two packs; ReLU 3030 -> 3114, so a cheap expression keeps one.
bool latencyBound(const Expression::Node &n)
{
    static const std::set<std::string> slow = {"exp", "log", "log1p", "expm1", "tanh", "sigmoid", "erf", "pow"};
    if (n.kind == Expression::Kind::Call && slow.count(n.name))
        return true;
    for (const auto &a : n.args)
        if (latencyBound(*a))
            return true;
    return false;
}

KernelTemplate cudaPointwise(const std::string &family)
{
    KernelTemplate t;
    t.id = "cuda." + family + ".grid_stride";
    t.family = family;
    t.backend = "cuda";
    t.description = "grid-stride pointwise kernel rendering the card's expression, ILP VEC-element packs per thread in flight, "
                    "a capped grid";
    t.space = {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"ilp", {1, 2, 4}}, {"grid_cap", {0, 1056, 4224, 16896, 65536}}};
    t.valid = [](const J &p, const OperatorCard &card) {
        return servable(card, "cuda") && p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16;
    };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + expressionDefines(card, Expression::Target::Cuda)
               + templateSource("pointwise.cu");
    };
    t.seed = [](const OperatorCard &card) {
        bool slow = false;
        try {
            slow = latencyBound(Expression::parse(card.expression, inputNames(card)).root());
        } catch (const Error &) { // not servable: valid() refuses every point anyway
        }
        return J{{"block", 256}, {"vec", cudaVecFor(card)}, {"ilp", slow ? 2 : 1}, {"grid_cap", 0}};
    };
    t.launch = [](const J &p, const OperatorCard &card) {
        const int block = p.at("block"), vec = p.at("vec"), ilp = p.value("ilp", 1);
        std::string n;
        for (const auto &d : card.outputs.front().dims)
            n += (n.empty() ? "" : " * ") + d;
        if (n.empty())
            n = "1";
        // grid_cap 0: ILP packs per thread, no grid-stride loop iterations.
        const std::string blocks = "ceil_div(" + n + ", " + std::to_string(block * vec * ilp) + ")";
        const int cap = p.at("grid_cap");
        J args = J::array();
        for (size_t i = 0; i < kMaxInputs; ++i)
            args.push_back("in:" + card.inputs.at(i < card.inputs.size() ? i : 0).name);
        args.push_back("out:" + card.outputs.front().name);
        args.push_back("i64:" + n);
        return cudaOneKernelPlan("kf_pointwise", {cap == 0 ? blocks : "min(" + blocks + ", " + std::to_string(cap) + ")", 1, 1}, block, args);
    };
    return t;
}

KernelTemplate cpuPointwise(const std::string &family)
{
    KernelTemplate t;
    t.id = "cpu." + family + ".rows";
    t.family = family;
    t.backend = "cpu";
    t.description = "pointwise loop rendering the card's expression, UNROLL elements at a time";
    t.space = {{"unroll", {1, 4, 8, 16}}};
    t.valid = [](const J &, const OperatorCard &card) { return servable(card, "cpu"); };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + templateSource("cpu_rows.h") + expressionDefines(card, Expression::Target::Cpp)
               + templateSource("cpu_pointwise.cpp");
    };
    return t;
}

} // namespace

void addPointwiseTemplates(TemplateLibrary &lib)
{
    std::vector<std::string> families = {kPointwiseFamily};
    for (const auto &op : pointwiseOps())
        families.push_back(op.family);
    for (const auto &f : families) {
        lib.add(cudaPointwise(f));
        lib.add(cpuPointwise(f));
    }
}

} // namespace kforge
