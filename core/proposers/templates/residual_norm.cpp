// Templates for the residual add and the RMSNorm after it (runtime/fused_ops.h, add_rms_norm_cast): x and
// residual [rows, cols] and the weight [cols] in, h = x + residual and the normalized y out. The eps is the
// card's (its one float reference argument), compiled in.
#include <algorithm>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

KernelTemplate cudaTemplate()
{
    const std::string id = "cuda.add_rms_norm_cast.rows";
    KernelTemplate t;
    t.id = id;
    t.family = "add_rms_norm_cast";
    t.backend = "cuda";
    t.description = "a block per row: x and residual read once, h written once and kept in REG packs of VEC per thread (a longer row "
                    "streamed and read back), the row's mean square, y written once";
    t.space = {{"block", {64, 128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"reg", {1, 2, 4, 8}}};
    t.valid = [](const J &p, const OperatorCard &card) { return p.at("vec").get<int>() * dtypeSize(card.inputs.front().dtype) <= 16; };
    t.render = [id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + epsDefine(referenceEps(card))
               + templateSource("row_packs.cuh")
               + templateSource("add_rms_rows.cu");
    };
    t.launch = [](const J &p, const OperatorCard &) {
        return cudaOneKernelPlan("kf_add_rms", {"rows", 1, 1}, p.at("block"),
                                 {"in:x", "in:residual", "in:weight", "out:h", "out:y", "sym:rows", "sym:cols"});
    };
    // 128 or 256 threads holding the row in at most 32 values each (no spills); a longer row streams the
    // rest, reading back its own h from L2.
    t.seed = [](const OperatorCard &card) {
        const int vec = cudaVecFor(card), maxReg = std::max(1, 32 / vec);
        const int64_t cols = card.shape.at("cols");
        const int block = int64_t(128) * vec * maxReg >= cols ? 128 : 256;
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
    lib.add(cpuUnrolledRowsTemplate("add_rms_norm_cast",
                                    "per row: h = x + residual with UNROLL partial sums of squares, then h normalized times the weight",
                                    [](const OperatorCard &card) { return epsDefine(referenceEps(card), false); }, "cpu_add_rms.cpp"));
    lib.add(cudaTemplate());
}

} // namespace kforge
