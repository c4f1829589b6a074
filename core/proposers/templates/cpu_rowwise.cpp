// CPU templates for the row-wise families other than softmax and the pointwise ones: normalizations,
// reductions and cross-entropy (the scans: scan.cpp), fp32, over contiguous rows. Loops are written with independent
// accumulators and no calls in the inner loop so the compiler vectorizes them; the tuning space sets
// the accumulator count and unrolling.
#include <cstdio>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// A template's source: its parameters as defines (and EPS, the card's, where `eps`), the shared prologue
// (cpu_rows.h), a helper file ("" for none, e.g. cpu_row_sum.h) and the kernel file with the kforge_entry function.
KernelTemplate rowTemplate(const std::string &family, const std::string &description, std::map<std::string, std::vector<J>> space,
                           std::string helper, std::string kernelFile, bool eps = false)
{
    const std::string id = "cpu." + family + ".rows";
    auto render = [id, family, helper, kernelFile, eps](const J &p, const OperatorCard &card) {
        char epsLine[64] = "";
        if (eps)
            std::snprintf(epsLine, sizeof epsLine, "#define EPS %.17g\n", referenceEps(card));
        // The RMS norms' one kernel file: Gemma's multiplies by one plus the weight.
        const std::string offset = family == "rms_norm_offset" ? "#define WEIGHT_OFFSET 1\n" : "";
        return paramDefines(id, p) + epsLine + offset + templateSource("cpu_rows.h") + (helper.empty() ? std::string() : templateSource(helper))
               + templateSource(kernelFile);
    };
    auto valid = [](const J &, const OperatorCard &card) { return card.inputs.front().dtype == DType::F32; };
    KernelTemplate t{id, family, "cpu", description, std::move(space), valid, render, {}, {}, {}, {}};
    seedPartialResults(t, true);
    return t;
}

const std::vector<J> kAcc = {"float", "double"};
const std::vector<J> kAccumulators = {1, 2, 4, 8, 16};

} // namespace

void addCpuRowwiseTemplates(TemplateLibrary &lib)
{
    lib.add(rowTemplate("log_softmax", "max, log-sum-exp with partial sums, then x - max - log(sum)",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_logsumexp.h", "cpu_log_softmax.cpp"));
    lib.add(rowTemplate("layer_norm", "two-pass mean and variance per row with partial sums, then scale and shift",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_sum.h", "cpu_layer_norm.cpp", true));
    for (const char *f : {"rms_norm", "rms_norm_cast"})
        lib.add(rowTemplate(f, "sum of squares with partial sums, then x * rsqrt(mean + eps) * weight",
                            {{"acc", kAcc}, {"accumulators", kAccumulators}}, "", "cpu_rms_norm.cpp", true));
    lib.add(rowTemplate("rms_norm_offset", "sum of squares with partial sums, then x * rsqrt(mean + eps) * (1 + weight)",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "", "cpu_rms_norm.cpp", true));
    lib.add(rowTemplate("group_norm", "per (sample, group): mean and variance over channels x spatial, then per-channel affine",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_sum.h", "cpu_group_norm.cpp", true));
    lib.add(rowTemplate("sum", "row sums with independent partial sums", {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_sum.h",
                        "cpu_sum.cpp"));
    lib.add(rowTemplate("mean", "row means with independent partial sums", {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_sum.h",
                        "cpu_mean.cpp"));
    lib.add(rowTemplate("max", "row maxima with independent partial maxima, NaN-propagating", {{"accumulators", kAccumulators}}, "",
                        "cpu_max.cpp"));
    lib.add(rowTemplate("argmax", "index of the first row maximum", {{"chunk", {64, 256, 1024}}}, "",
                        "cpu_argmax.cpp"));
    lib.add(rowTemplate("cross_entropy", "per row: log-sum-exp minus the target logit; mean over rows",
                        {{"acc", kAcc}, {"accumulators", kAccumulators}}, "cpu_row_logsumexp.h", "cpu_cross_entropy.cpp"));
}

} // namespace kforge
