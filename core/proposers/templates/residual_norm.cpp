// Templates for the residual add and the RMSNorm after it (runtime/fused_ops.h, add_rms_norm_cast, and
// add_rms_norm_offset with Gemma's norm): x and residual [rows, cols] and the weight [cols] in, h = x +
// residual and the normalized y out. The eps is the card's (its one float reference argument), compiled in;
// Gemma's one plus the weight is WEIGHT_OFFSET.
#include <algorithm>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// "#define WEIGHT_OFFSET 1" for Gemma's norm, else nothing.
std::string offsetDefine(const std::string &family)
{
    return family == "add_rms_norm_offset" ? "#define WEIGHT_OFFSET 1\n" : "";
}

KernelTemplate cudaTemplate(const std::string &family)
{
    const std::string id = "cuda." + family + ".rows";
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = "a block per row: x and residual read once, h written once and kept in REG packs of VEC per thread (a longer row "
                    "streamed and read back), the row's mean square, y written once";
    t.space = {{"block", {64, 128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"reg", {1, 2, 4, 8}}};
    t.valid = [](const J &p, const OperatorCard &card) { return p.at("vec").get<int>() * dtypeSize(card.inputs.front().dtype) <= 16; };
    t.render = [id, family](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + offsetDefine(family) + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + epsDefine(referenceEps(card))
               + templateSource("row_packs.cuh")
               + templateSource("add_rms_rows.cu");
    };
    t.launch = [](const J &p, const OperatorCard &) {
        return cudaOneKernelPlan("kf_add_rms", {"rows", 1, 1}, p.at("block"),
                                 {"in:x", "in:residual", "in:weight", "out:h", "out:y", "sym:rows", "sym:cols"});
    };
    // 64, 128 or 256 threads, the fewest holding the row in at most 32 values each (no spills); a longer
    // row streams the rest, reading back its own h from L2. (Gemma 3's 1152-wide 16-bit rows on 128 threads
    // of two packs spilled 8 bytes; on 64 threads of four they do not.)
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card), maxReg = std::max(1, 32 / vec);
        const int64_t cols = card.shape.at("cols");
        const int block = int64_t(64) * vec * maxReg >= cols ? 64 : int64_t(128) * vec * maxReg >= cols ? 128 : 256;
        const int64_t packs = (cols + int64_t(block) * vec - 1) / (int64_t(block) * vec);
        int reg = 1;
        while (reg < maxReg && reg < packs)
            reg *= 2;
        return J{{"block", block}, {"vec", vec}, {"reg", reg}};
    };
    return t;
}

} // namespace

void addResidualNormTemplates(TemplateLibrary &lib)
{
    for (const std::string family : {"add_rms_norm_cast", "add_rms_norm_offset"}) {
        lib.add(cpuUnrolledRowsTemplate(
            family, "per row: h = x + residual with UNROLL partial sums of squares, then h normalized times the weight",
            [family](const OperatorCard &card) { return offsetDefine(family) + epsDefine(referenceEps(card), false); }, "cpu_add_rms.cpp"));
        lib.add(cudaTemplate(family));
    }
}

} // namespace kforge
