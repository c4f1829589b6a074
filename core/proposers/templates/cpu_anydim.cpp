// CPU templates for the families over a middle dimension ([outer, dim, inner], core/ops/cards.cpp) and
// for instance norm, fp32. The kernel text is in resources/templates/anydim_*.cpp; this file gives each
// its tuning space: accumulator precision and how many inner columns one pass down dim carries.
#include <cstdio>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"

namespace kforge {

namespace {

using J = nlohmann::json;

const std::vector<J> kAcc = {"float", "double"};
// Inner columns per pass down dim: their accumulators stay in registers or L1 while dim streams by.
const std::vector<J> kTile = {64, 16, 256, 1024};

bool floatInput(const J &, const OperatorCard &card)
{
    return card.inputs.front().dtype == DType::F32;
}

// Tiles start at 64 columns (in double where the accumulator's type is a choice, as the CPU's other
// partial results do): each pass down dim then reads four cache lines of every row and keeps its 64
// accumulators in registers. 16 reads one line a row a pass, and 1024 keeps them in L1. Swept by
// candidate time at two shapes, 64 (double) was the best of the start points or within 2% of it in
// geometric mean for the tiles families, against the middle of the values' 0.47-0.81 (RESULTS-search).
std::function<J(const OperatorCard &)> tileSeed(const std::map<std::string, std::vector<J>> &space)
{
    return cpuSeedInDouble(space, {{"tile", 64}});
}

KernelTemplate dimTemplate(const std::string &family, const std::string &kind, const std::string &description,
                           std::map<std::string, std::vector<J>> space, std::string defines, std::string kernelFile)
{
    const std::string id = "cpu." + family + "." + kind;
    auto render = [id, defines, kernelFile](const J &p, const OperatorCard &) {
        return paramDefines(id, p) + defines + templateSource("anydim_prologue.h") + templateSource(kernelFile);
    };
    auto seed = space.count("tile") ? tileSeed(space) : std::function<J(const OperatorCard &)>{};
    return {id, family, "cpu", description, std::move(space), floatInput, render, {}, std::move(seed), {}, {}};
}

} // namespace

double lastDoubleArg(const OperatorCard &card)
{
    double eps = 1e-5;
    for (const auto &a : card.referenceArgs)
        if (a.contains("double"))
            eps = a["double"].get<double>();
    return eps;
}

void addCpuAnyDimTemplates(TemplateLibrary &lib)
{
    const std::vector<std::pair<std::string, int>> reductions = {{"sum_dim", 0}, {"mean_dim", 1}, {"max_dim", 2}, {"min_dim", 3},
                                                                 {"argmax_dim", 4}, {"argmin_dim", 5}, {"prod_dim", 6}};
    for (const auto &[family, op] : reductions) {
        std::map<std::string, std::vector<J>> space = {{"tile", kTile}};
        if (op <= 1 || op == 6)
            space["acc"] = kAcc;
        lib.add(dimTemplate(family, "tiles", "TILE inner columns at a time, one accumulator each running down dim (contiguous loads)",
                            std::move(space), "#define OP " + std::to_string(op) + "\n", "anydim_reduce.cpp"));
    }
    const std::vector<std::pair<std::string, int>> norms = {{"softmax_dim", 0}, {"log_softmax_dim", 1}, {"rms_norm_dim", 2}, {"l2_norm_dim", 3}, {"l1_norm_dim", 4}};
    for (const auto &[family, code] : norms) {
        const int c = code;
        KernelTemplate t = dimTemplate(family, "tiles", "TILE inner columns at a time: statistics down dim, then the outputs",
                                       {{"tile", kTile}, {"acc", kAcc}}, "", "anydim_norm.cpp");
        t.render = [id = t.id, c](const J &p, const OperatorCard &card) {
            return paramDefines(id, p) + "#define FAMILY " + std::to_string(c) + "\n" + epsDefine(lastDoubleArg(card), false)
                   + templateSource("anydim_prologue.h") + templateSource("anydim_norm.cpp");
        };
        lib.add(std::move(t));
    }
    KernelTemplate in = dimTemplate("instance_norm", "rows", "two-pass mean and variance per (sample, channel) row with partial sums",
                                    {{"acc", kAcc}, {"accumulators", {1, 2, 4, 8, 16}}}, "", "anydim_instance_norm.cpp");
    seedPartialResults(in, true); // one (sample, channel) plane a sum
    in.render = [id = in.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + epsDefine(lastDoubleArg(card), false) + templateSource("anydim_prologue.h")
               + templateSource("anydim_instance_norm.cpp");
    };
    lib.add(std::move(in));
}

} // namespace kforge
