// CPU softmax over the last dimension, fp32. Three genuinely different kernels:
//  - three_pass: max, then exp and sum (writing exp to the output), then scale the output;
//  - online: one pass keeping a running max and a rescaled running sum per lane, then one write pass;
//  - vector: three passes over explicit SIMD vectors with a vectorized polynomial exp.
// Both share an exp that is either libm's or a range-reduced polynomial of a chosen degree: the low
// degrees are faster and are rejected by verification when too inaccurate, which the search learns.
// Each template's seed is an accurate point, so a search starts from kernels that can pass.
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"

namespace kforge {

namespace {

// The exp the scalar kernels share (cpu_softmax_exp.h): libm's, or a polynomial of a chosen degree.
std::string expPrelude(const std::string &exp)
{
    const int degree = exp == "poly3" ? 3 : exp == "poly4" ? 4 : exp == "poly6" ? 6 : 0;
    return "#define EXP_POLY_DEGREE " + std::to_string(degree) + " // 0: libm expf\n" + templateSource("cpu_softmax_exp.h");
}

std::string renderThreePass(const nlohmann::json &p, const OperatorCard &)
{
    std::string s = "// template cpu.softmax.three_pass\n#define UNROLL " + std::to_string(p.at("unroll").get<int>()) + "\n";
    s += "#define ACC " + p.at("acc").get<std::string>() + "\n";
    return s + expPrelude(p.at("exp").get<std::string>()) + templateSource("cpu_softmax_entry.h") + templateSource("cpu_softmax_three_pass.cpp");
}

std::string renderOnline(const nlohmann::json &p, const OperatorCard &)
{
    std::string s = "// template cpu.softmax.online\n#define LANES " + std::to_string(p.at("lanes").get<int>()) + "\n";
    return s + expPrelude(p.at("exp").get<std::string>()) + templateSource("cpu_softmax_entry.h") + templateSource("cpu_softmax_online.cpp");
}

std::string renderVector(const nlohmann::json &p, const OperatorCard &)
{
    const int width = p.at("width").get<int>();
    const std::string exp = p.at("exp").get<std::string>();
    std::string s = "// template cpu.softmax.vector\n#define VW " + std::to_string(width) + "\n";
    s += "#define EXP_POLY_DEGREE " + std::string(exp == "poly4" ? "4" : "6") + "\n";
    s += "#define SUM_ACCUMULATORS " + std::to_string(p.at("accumulators").get<int>()) + "\n";
    return s + templateSource("cpu_softmax_vector.h") + templateSource("cpu_softmax_entry.h") + templateSource("cpu_softmax_vector.cpp");
}

bool fp32Only(const nlohmann::json &, const OperatorCard &card)
{
    return card.inputs.size() == 1 && card.inputs[0].dtype == DType::F32 && card.inputs[0].dims.size() == 2;
}

} // namespace

void addCpuSoftmaxTemplates(TemplateLibrary &lib)
{
    using J = nlohmann::json;
    const std::vector<J> exps = {"libm", "poly3", "poly4", "poly6"};
    lib.add({"cpu.softmax.three_pass", "softmax", "cpu",
             "max pass, exp-and-sum pass writing the output, scale pass; UNROLL independent partial results",
             {{"unroll", {1, 2, 4, 8, 16}}, {"exp", exps}, {"acc", {"float", "double"}}},
             fp32Only, renderThreePass, {}, [](const OperatorCard &) { return J{{"unroll", 4}, {"exp", "libm"}, {"acc", "float"}}; }, {}, {}});
    lib.add({"cpu.softmax.online", "softmax", "cpu",
             "single pass with a running max and rescaled sum per lane (online softmax), then a write pass",
             {{"lanes", {1, 2, 4, 8, 16}}, {"exp", exps}},
             fp32Only, renderOnline, {}, [](const OperatorCard &) { return J{{"lanes", 8}, {"exp", "libm"}}; }, {}, {}});
    lib.add({"cpu.softmax.vector", "softmax", "cpu",
             "explicit SIMD vectors of VW floats with a vectorized polynomial exp; SUM_ACCUMULATORS independent sums",
             {{"width", {4, 8, 16}}, {"exp", {"poly6", "poly4"}}, {"accumulators", {1, 2, 4}}},
             fp32Only, renderVector, {}, [](const OperatorCard &) { return J{{"width", 8}, {"exp", "poly6"}, {"accumulators", 2}}; }, {}, {}});
}

} // namespace kforge
