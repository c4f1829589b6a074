// The loss templates (core/ops/loss_ops.h): one CUDA and one CPU kernel for every pointwise-then-reduce
// family, rendering the card's expression as KF_EXPR over the inputs' values with each input read in
// full or as a row broadcast over the rows; and the triplet margin loss's row kernels, rendering its
// expression over the row's two distances. Registered under each family's name, as the pointwise ones.
#include <algorithm>
#include <string>

#include "ops/expression.h"
#include "ops/loss_ops.h"
#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"
#include "util/error.h"

namespace kforge {

namespace {

using J = nlohmann::json;

constexpr size_t kMaxInputs = 4; // the CUDA reduce kernel's pointer arguments
// Threads of the reduce kernel resident per SM: its BPS blocks must all be (a second wave doubles a
// share's time), which __launch_bounds__ grants by capping registers; at 2048 (32 registers) the 16-bit
// packs of a log expression spilled, at 1024 (64) nothing does, and 1024 threads with two packs of
// each input in flight cover an SM's share of the bandwidth.
constexpr int kMaxResidentThreads = 1024;
const std::vector<J> kAcc = {"double", "float"};
const std::vector<J> kAccumulators = {1, 2, 4, 8, 16};

const std::vector<std::string> kFull = {"rows", "cols"}, kPerColumn = {"cols"};

std::vector<std::string> inputNames(const OperatorCard &card)
{
    std::vector<std::string> names;
    for (const auto &t : card.inputs)
        names.push_back(t.name);
    return names;
}

bool parses(const std::string &expression, const std::vector<std::string> &names)
{
    try {
        Expression::parse(expression, names);
    } catch (const Error &) {
        return false;
    }
    return !expression.empty();
}

bool dtypeServed(DType dt, const std::string &backend)
{
    return backend == "cpu" ? dt == DType::F32 : dt == DType::F32 || dt == DType::F16 || dt == DType::BF16;
}

// One scalar output of the inputs' dtype, every input of that dtype, and a family these templates serve.
bool scalarOfInputs(const OperatorCard &card, const std::string &backend)
{
    if (card.inputs.empty() || card.outputs.size() != 1 || !card.outputs.front().dims.empty() || !card.shape.count("rows")
        || !card.shape.count("cols"))
        return false;
    const DType dt = card.outputs.front().dtype;
    for (const auto &t : card.inputs)
        if (t.dtype != dt)
            return false;
    return dtypeServed(dt, backend);
}

// A reduce card: an expression over its inputs, each [rows, cols] or a [cols] row, at least one in full.
bool reduceServable(const OperatorCard &card, const std::string &backend)
{
    if (!lossReductionOf(card.family) || card.inputs.size() > kMaxInputs || !scalarOfInputs(card, backend))
        return false;
    bool full = false;
    for (const auto &t : card.inputs) {
        if (t.dims != kFull && t.dims != kPerColumn)
            return false;
        full |= t.dims == kFull;
    }
    return full && parses(card.expression, inputNames(card));
}

bool tripletServable(const OperatorCard &card, const std::string &backend)
{
    if (card.family != kTripletFamily || card.inputs.size() != 3 || !scalarOfInputs(card, backend))
        return false;
    for (const auto &t : card.inputs)
        if (t.dims != kFull)
            return false;
    return parses(card.expression, inputNames(card));
}

// "#define KF_NIN n" and KF_EXPR(v): the expression over v[0..n-1], `names` in order; names in `zero` are 0;
// every operation rounded through `roundEach` when one is named.
std::string expressionDefines(const std::string &expression, const std::vector<std::string> &names, Expression::Target target,
                              const std::vector<std::string> &zero = {}, const std::string &roundEach = {})
{
    std::map<std::string, std::string> values;
    int next = 0;
    for (const auto &name : names)
        values[name] = std::find(zero.begin(), zero.end(), name) != zero.end() ? "0.0f" : "(v)[" + std::to_string(next++) + "]";
    const auto e = Expression::parse(expression, names);
    return "// expression: " + e.text() + "\n" + defineLine("KF_NIN", std::to_string(names.size())) + "#define KF_EXPR(v) "
           + e.render(target, values, roundEach) + "\n";
}

// ATen computes a loss element by element into a tensor of the inputs' type (its loss kernels and the
// composite ones alike, each operation rounding), then reduces: in float16 a squared difference past
// 65504 is Inf there and makes the mean Inf. The 16-bit kernels round each operation the same way
// (kf_round_t, loss_common.cuh), so they overflow where ATen does; float32 needs no rounding.
std::string lossRounding(const OperatorCard &card)
{
    return card.inputs.front().dtype == DType::F32 ? std::string() : std::string("kf_round_t");
}

// KF_MODE(k): 1 where input k is a [cols] row broadcast over the rows; KF_FULL: the first full input.
std::string modeDefines(const OperatorCard &card)
{
    int mask = 0, full = -1;
    for (size_t k = 0; k < card.inputs.size(); ++k) {
        if (card.inputs[k].dims == kPerColumn)
            mask |= 1 << k;
        else if (full < 0)
            full = int(k);
    }
    return defineLine("KF_MODE_MASK", mask) + "#define KF_MODE(k) (((KF_MODE_MASK) >> (k)) & 1)\n" + defineLine("KF_FULL", full);
}

// What the sum is divided by, as a launch-plan expression.
std::string denominator(const OperatorCard &card)
{
    const auto r = *lossReductionOf(card.family);
    return r == LossReduction::Mean ? "rows * cols" : r == LossReduction::Sum ? "1" : "rows";
}

KernelTemplate cudaReduce(const std::string &family)
{
    KernelTemplate t;
    t.id = "cuda." + family + ".grid_reduce";
    t.family = family;
    t.backend = "cuda";
    t.description = "grid of BPS blocks per SM striding over VEC-element packs of every input, UNROLL packs in flight, ACC partials per "
                    "block, then one block adds them in order";
    t.space = {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"unroll", {1, 2, 4}}, {"bps", {1, 2, 4, 8}}, {"acc", kAcc}};
    t.valid = [](const J &p, const OperatorCard &card) {
        return reduceServable(card, "cuda") && p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16
               && p.value("block", 256) * p.value("bps", 1) <= kMaxResidentThreads;
    };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype)
               + expressionDefines(card.expression, inputNames(card), Expression::Target::Cuda, {}, lossRounding(card)) + modeDefines(card)
               + templateSource("loss_common.cuh") + templateSource("loss_reduce.cu");
    };
    // 1024 threads per SM, two 16-byte packs of every input in flight per thread.
    t.seed = [](const OperatorCard &card) { return J{{"block", 256}, {"vec", cudaVecFor(card)}, {"unroll", 2}, {"bps", 4}, {"acc", "double"}}; };
    t.launch = [](const J &p, const OperatorCard &card) {
        const int per = p.at("block").get<int>() * p.at("vec").get<int>() * p.at("unroll").get<int>();
        const std::string blocks = "max(1, min(ceil_div(rows * cols, " + std::to_string(per) + "), sm_count * " + std::to_string(int(p.at("bps"))) + "))";
        J partial = J::array();
        for (size_t i = 0; i < kMaxInputs; ++i)
            partial.push_back("in:" + card.inputs.at(i < card.inputs.size() ? i : 0).name);
        for (const char *a : {"ws:partial", "i64:rows * cols", "sym:cols"})
            partial.push_back(a);
        return J{{"kernels", J::array({{{"name", "kf_loss_partial"}, {"grid", {blocks, 1, 1}}, {"block", {p.at("block"), 1, 1}},
                                        {"shared_bytes", "0"}, {"args", partial}},
                                       {{"name", "kf_loss_final"}, {"grid", {1, 1, 1}}, {"block", {1024, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"ws:partial", "out:" + card.outputs.front().name, "i64:" + blocks, "i64:" + denominator(card)}}}})},
                 {"workspace", J::array({{{"name", "partial"}, {"bytes", blocks + " * 8"}}})}};
    };
    return t;
}

KernelTemplate cpuReduce(const std::string &family)
{
    KernelTemplate t;
    t.id = "cpu." + family + ".rows";
    t.family = family;
    t.backend = "cpu";
    t.description = "row by row with ACCUMULATORS independent ACC partial sums of the card's expression, rows added in double";
    t.space = {{"acc", kAcc}, {"accumulators", kAccumulators}};
    t.valid = [](const J &, const OperatorCard &card) { return reduceServable(card, "cpu"); };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        const auto r = *lossReductionOf(card.family);
        const int den = r == LossReduction::Mean ? 0 : r == LossReduction::Sum ? 1 : 2;
        return paramDefines(id, p) + templateSource("cpu_rows.h") + expressionDefines(card.expression, inputNames(card), Expression::Target::Cpp)
               + modeDefines(card) + defineLine("KF_DEN_MODE", den) + templateSource("cpu_loss_reduce.cpp");
    };
    seedPartialResults(t, true);
    return t;
}

std::string tripletDefines(const OperatorCard &card, Expression::Target target)
{
    // Each input name stands for its distance from the anchor: the positive's is v[0], the negative's v[1].
    return expressionDefines(card.expression, inputNames(card), target, {card.inputs.front().name}) + "#define KF_EPS "
           + std::to_string(kTripletEps) + "\n";
}

KernelTemplate cudaTriplet()
{
    KernelTemplate t;
    t.id = std::string("cuda.") + kTripletFamily + ".rows";
    t.family = kTripletFamily;
    t.backend = "cuda";
    t.description = "TPR threads per row and RPB rows per block, one pass over the three inputs with VEC-element loads, both distances' sums "
                    "in ACC, the row's loss into a workspace, then one block takes the mean";
    t.space = {{"tpr", {32, 64, 128, 256, 512, 1024}}, {"rpb", {1, 2, 4, 8}}, {"vec", {1, 2, 4, 8}}, {"acc", kAcc}};
    t.valid = [](const J &p, const OperatorCard &card) {
        return tripletServable(card, "cuda") && p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16
               && p.value("tpr", 32) * p.value("rpb", 1) <= 1024;
    };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + tripletDefines(card, Expression::Target::Cuda)
               + templateSource("loss_common.cuh") + templateSource("loss_triplet.cu");
    };
    // About eight packs per thread along the row, at least 256 threads per block.
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card);
        int tpr = 32;
        while (tpr < 1024 && int64_t(tpr) * vec * 8 < card.shape.at("cols"))
            tpr *= 2;
        return J{{"tpr", tpr}, {"rpb", std::max(1, 256 / tpr)}, {"vec", vec}, {"acc", "double"}};
    };
    t.launch = [](const J &p, const OperatorCard &card) {
        const int tpr = p.at("tpr"), rpb = p.at("rpb");
        J rows = J::array();
        for (const auto &in : card.inputs)
            rows.push_back("in:" + in.name);
        for (const char *a : {"ws:rowloss", "sym:rows", "sym:cols"})
            rows.push_back(a);
        return J{{"kernels", J::array({{{"name", "kf_triplet_rows"}, {"grid", {"max(1, ceil_div(rows, " + std::to_string(rpb) + "))", 1, 1}},
                                        {"block", {tpr * rpb, 1, 1}}, {"shared_bytes", "0"}, {"args", rows}},
                                       {{"name", "kf_loss_final"}, {"grid", {1, 1, 1}}, {"block", {1024, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"ws:rowloss", "out:" + card.outputs.front().name, "sym:rows", "sym:rows"}}}})},
                 {"workspace", J::array({{{"name", "rowloss"}, {"bytes", "max(1, rows) * 8"}}})}};
    };
    return t;
}

KernelTemplate cpuTriplet()
{
    KernelTemplate t;
    t.id = std::string("cpu.") + kTripletFamily + ".rows";
    t.family = kTripletFamily;
    t.backend = "cpu";
    t.description = "per row both distances' sums with ACCUMULATORS independent ACC partial sums, the mean over rows in double";
    t.space = {{"acc", kAcc}, {"accumulators", kAccumulators}};
    t.valid = [](const J &, const OperatorCard &card) { return tripletServable(card, "cpu"); };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + templateSource("cpu_rows.h") + tripletDefines(card, Expression::Target::Cpp) + templateSource("cpu_loss_triplet.cpp");
    };
    seedPartialResults(t, true);
    return t;
}

} // namespace

void addLossTemplates(TemplateLibrary &lib)
{
    for (const auto &f : lossFamilies()) {
        lib.add(cudaReduce(f));
        lib.add(cpuReduce(f));
    }
    lib.add(cudaTriplet());
    lib.add(cpuTriplet());
}

} // namespace kforge
