// Templates for the fused attention-softmax chains (runtime/fused_ops.h): scaled_softmax and
// scaled_masked_softmax, softmax(x * scale [+ mask]) in float32 with x, the mask and y in the card's
// dtype. The scale is the card's (its second reference argument; for a dividing form its reciprocal),
// compiled in as SCALE; the pack's guard checks every call's scale against the card's.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

bool masked(const std::string &family) { return family == "scaled_masked_softmax"; }

// What x is multiplied by (the scale, or the reciprocal of a divisor) as a float literal that reads back
// to the same float: with a point or an exponent, so a whole scale (1 with no scale, 2) is `1.f`, not `1f`.
std::string scaleDefine(const OperatorCard &card)
{
    char digits[48];
    std::snprintf(digits, sizeof digits, "%.9g", softmaxMultiplier(card));
    const std::string literal = std::string(digits) + (std::strpbrk(digits, ".eE") ? "" : ".");
    return "#define SCALE " + literal + "f\n";
}

// The kernel arguments both CUDA templates take: x, the mask (x again where there is none), y and the
// shape symbols, the mask's as ops/mask_rows.h says (rows in their place where there is no mask).
J cudaArgs(const std::string &family)
{
    return masked(family) ? J{"in:x", "in:mask", "out:y", "sym:rows", "sym:cols", "sym:mrows", "sym:minner", "sym:mstep", "sym:mblock"}
                          : J{"in:x", "in:x", "out:y", "sym:rows", "sym:cols", "sym:rows", "sym:rows", "sym:rows", "sym:rows"};
}

// A CUDA template's source: its parameters, the dtype's prelude, MASK and SCALE, then the kernel file.
std::string cudaSource(const std::string &id, const std::string &family, const J &p, const OperatorCard &card, const std::string &helpers,
                       const char *kernelFile)
{
    return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + helpers + templateSource("mask_rows.cuh") + "#define MASK "
           + (masked(family) ? "1" : "0") + "\n" + scaleDefine(card) + templateSource(kernelFile);
}

KernelTemplate cpuTemplate(const std::string &family)
{
    const std::string id = "cpu." + family + ".rows";
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cpu";
    t.description = "per row: scale (and mask) into the output, max, exp with UNROLL partial sums, normalize";
    t.space = {{"unroll", {1, 2, 4, 8}}};
    t.valid = [](const J &, const OperatorCard &card) { return card.inputs.front().dtype == DType::F32; };
    t.render = [id, family](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define MASK " + (masked(family) ? "1" : "0") + "\n" + scaleDefine(card)
               + templateSource("cpu_scaled_softmax.cpp");
    };
    t.seed = [](const OperatorCard &) { return J{{"unroll", 4}}; };
    return t;
}

KernelTemplate cudaTemplate(const std::string &family)
{
    const std::string id = "cuda." + family + ".rows";
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = "a block per row held in registers (BLOCK x VEC x REG elements), scale and mask fused into one read, "
                    "float32 max and sum, one write";
    t.space = {{"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"reg", {1, 2, 4, 8}}};
    t.valid = [](const J &p, const OperatorCard &card) {
        const int block = p.at("block"), vec = p.at("vec"), reg = p.at("reg");
        const int64_t cols = card.shape.at("cols");
        // The captured row fits in the registers, without more than one pack per thread to spare; a row
        // longer than any point holds takes the looping path, with the fewest registers.
        if (vec * dtypeSize(card.inputs.front().dtype) > 16)
            return false;
        if (cols > int64_t(1024) * vec * 8)
            return reg == 1;
        return int64_t(block) * vec * reg >= cols && int64_t(block) * vec * (reg - 1) < cols;
    };
    t.render = [id, family](const J &p, const OperatorCard &card) {
        return cudaSource(id, family, p, card, cudaBlockHelpers(), "scaled_softmax_rows.cu");
    };
    t.launch = [family](const J &p, const OperatorCard &) { return cudaOneKernelPlan("kf_scaled_softmax", {"rows", 1, 1}, p.at("block"), cudaArgs(family)); };
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card);
        const int64_t cols = card.shape.at("cols");
        int block = 256;
        while (block < 1024 && int64_t(block) * vec * 4 < cols)
            block *= 2;
        const int64_t need = (cols + int64_t(block) * vec - 1) / (int64_t(block) * vec);
        const int reg = need > 8 ? 1 : int(std::max<int64_t>(need, 1));
        return J{{"block", block}, {"vec", vec}, {"reg", reg}};
    };
    return t;
}

// Rows up to this long take the lanes of a warp; longer ones a block (cudaTemplate).
constexpr int64_t kWarpRow = 1024;

// Many short rows (attention over a few hundred tokens): TPR lanes per row, RPB rows a block, REG elements a
// lane. On the H100 a block a row ran a ViT block's 151296 x 197 float32 scores at 0.63-0.84x of the
// two ATen calls it replaces (bench/RESULTS-workloads.md).
KernelTemplate cudaWarpTemplate(const std::string &family)
{
    const std::string id = "cuda." + family + ".warp";
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = "TPR lanes of a warp per row, RPB rows a block, the row in REG registers a lane (element loads, coalesced across "
                    "the lanes), scale and mask fused into one read, shuffles for the max and the sum, one write";
    t.space = {{"tpr", {8, 16, 32}}, {"rpb", {1, 2, 4, 8, 16}}, {"reg", {1, 2, 4, 8, 16, 32}}};
    t.valid = [](const J &p, const OperatorCard &card) {
        const int tpr = p.at("tpr"), rpb = p.at("rpb"), reg = p.at("reg");
        const int64_t cols = card.shape.at("cols");
        // Whole warps a block, at most 512 threads; the captured row held by the fewest registers of the space
        // that hold it; only rows a warp can hold.
        return cols <= kWarpRow && (tpr * rpb) % 32 == 0 && tpr * rpb <= 512 && int64_t(tpr) * reg >= cols
               && (reg == 1 || int64_t(tpr) * (reg / 2) < cols);
    };
    t.render = [id, family](const J &p, const OperatorCard &card) { return cudaSource(id, family, p, card, "", "scaled_softmax_warp.cu"); };
    t.launch = [family](const J &p, const OperatorCard &) {
        const int tpr = p.at("tpr"), rpb = p.at("rpb");
        return cudaOneKernelPlan("kf_scaled_softmax_warp", {"ceil_div(rows, " + std::to_string(rpb) + ")", 1, 1}, tpr * rpb, cudaArgs(family));
    };
    t.seed = [](const OperatorCard &card) {
        // As ATen's softmax for short rows: lanes to the row's next power of two (at least 8, at most a
        // warp), the rest in registers, 128 threads a block.
        const int64_t cols = card.shape.at("cols");
        int tpr = 8;
        while (tpr < 32 && tpr < cols)
            tpr *= 2;
        int reg = 1;
        while (int64_t(tpr) * reg < cols)
            reg *= 2;
        return J{{"tpr", tpr}, {"rpb", 128 / tpr}, {"reg", reg}};
    };
    return t;
}

} // namespace

void addFusedSoftmaxTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"scaled_softmax", "scaled_masked_softmax"}) {
        lib.add(cpuTemplate(f));
        lib.add(cudaWarpTemplate(f)); // first: where a row is short, its seed is the first try
        lib.add(cudaTemplate(f));
    }
}

} // namespace kforge
