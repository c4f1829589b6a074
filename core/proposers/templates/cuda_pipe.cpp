// `cuda.<family>.pipe` for softmax, log-softmax, layer norm and RMS norm: persistent blocks that stream
// whole rows through a ring of STAGES shared-memory buffers filled by the bulk-copy engine.
//
// A block owns rows blockIdx.x, blockIdx.x + grid, ... While it reduces and writes one row, the copies
// of its next STAGES - 1 rows are already in flight, so the memory system never waits on a block's
// reduction or write phase (the rows and cluster templates load a row only once the block is free).
// Each thread handles the same column packs of every row, so layer/RMS norm weights are loaded into its
// registers once, not once per row. A thread keeps its packs of the row in registers (REGP packs) when
// they fit, so softmax computes one exp per element; longer rows are re-read from shared memory.
// Shapes the bulk copy cannot serve (a row that is not a multiple of 16 bytes, unaligned tensors, a row
// too large for the plan's shared memory) take a plain block-per-row path: correct, not fast.
#include <algorithm>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// Shared memory per SM on sm_90 (228 KiB), and what the system reserves per resident block.
constexpr int64_t kSmemPerSm = 233472;
constexpr int64_t kSmemPerBlockReserved = 1024;
constexpr int64_t kSmemPerBlockMax = kCudaChunkSmemCap;

int64_t stageBytes(int64_t elems, int elem)
{
    return (elems * elem + 127) / 128 * 128;
}

KernelTemplate pipeTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "pipe",
                                        "persistent blocks (or clusters of CL blocks, each with a chunk of the row) streaming rows "
                                        "through a ring of shared-memory buffers filled by the bulk-copy engine, the next rows in "
                                        "flight while one is reduced and written",
                                        {{"cl", {1, 2, 4, 8, 16}}, {"block", {64, 128, 256, 512, 1024}}, {"stages", {2, 3, 4, 6, 8}},
                                         {"bps", {1, 2, 3, 4, 6, 8, 12, 16}}, {"fill", {100, 90, 75}}, {"regp", {0, 1, 2, 4, 8}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const int cl = p.value("cl", 1), block = p.at("block"), stages = p.at("stages"), bps = p.at("bps"), regp = p.at("regp");
        const int fill = p.value("fill", 100);
        const int elem = dtypeSize(card.inputs.front().dtype), vec = 16 / elem;
        const int64_t cols = card.shape.at("cols"), per = cudaChunkElems(cols, cl, vec);
        // Only rows the bulk copy can serve; the plain path is a fallback for held-out shapes.
        if (cols * elem % 16 != 0)
            return false;
        // Every block of a cluster has part of the row; fewer clusters than SMs allow only for clusters
        // (the scheduler may not fit as many large clusters as the SMs would hold blocks).
        if ((cl - 1) * per >= cols || (fill < 100 && cl == 1))
            return false;
        // A cluster only where half as many blocks could not keep three buffers of their chunk (the seed's
        // rule): on the H200 a cluster of 2 ran a 4096-wide bf16 softmax 1.4x slower than one block per row.
        if (cl > 1 && 3 * stageBytes(cudaChunkElems(cols, cl / 2, vec), elem) <= kSmemPerBlockMax)
            return false;
        const int64_t smem = stages * stageBytes(per, elem);
        if (smem > kSmemPerBlockMax || bps * (smem + kSmemPerBlockReserved) > kSmemPerSm || block * bps > 2048)
            return false;
        const int64_t packs = per / vec;
        // Every thread has a pack; the register cache holds the chunk, and no smaller one would.
        if (block > packs)
            return false;
        if (regp > 0 && (packs > int64_t(block) * regp || (regp > 1 && packs <= int64_t(block) * (regp / 2))))
            return false;
        return true;
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".pipe\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family))) + defineLine("CL", p.value("cl", 1)) + defineLine("BLOCK", p.at("block"));
        s += defineLine("STAGES", p.at("stages")) + defineLine("BPS", p.at("bps")) + defineLine("REGP", p.at("regp"));
        s += defineLine("FAST_EXP", p.value("fast_exp", 1)) + epsDefine(referenceEps(card));
        return s + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + templateSource("pipe.cu");
    };
    t.seed = [family](const OperatorCard &card) {
        const int elem = dtypeSize(card.inputs.front().dtype), vec = 16 / elem;
        const int64_t cols = card.shape.at("cols");
        // The smallest cluster whose chunks fit three buffers in one block's shared memory (two at 16).
        int cl = 1;
        while (cl < 16 && 3 * stageBytes(cudaChunkElems(cols, cl, vec), elem) > kSmemPerBlockMax)
            cl *= 2;
        const int64_t per = cudaChunkElems(cols, cl, vec), packs = per / vec, row = stageBytes(per, elem);
        // The fewest threads that hold the chunk in four packs each, at least 128, at most 1024. Softmax
        // starts from eight packs on at most 256 threads. (H200: a 2048-wide bf16 RMS norm lost 10% with
        // 64 threads of 4 packs against 128 of 2; a 4096-wide bf16 softmax gained 2% with 64 threads of 8.)
        const int64_t weights = family == "layer_norm" ? 2 : family == "rms_norm" ? 1 : 0;
        const bool soft = !weights;
        int block = soft ? 64 : 128, target = soft ? 8 : 4;
        while (soft && block < 256 && packs > int64_t(block) * 8)
            block *= 2;
        if (packs > int64_t(block) * target)
            target = 4;
        while (block < 1024 && packs > int64_t(block) * target)
            block *= 2;
        while (block > 64 && block > packs)
            block /= 2;
        int regp = 1;
        while (regp < 8 && packs > int64_t(block) * regp)
            regp *= 2;
        if (packs > int64_t(block) * regp)
            regp = 0;
        // Blocks per SM as registers allow (the kernel asks ptxas for BPS of them): the chunk's floats, the
        // weight packs (4 registers each) and about 48 for the rest (at 40, two seeds got exactly 64 and
        // ptxas spilled 4-44 bytes). Then enough stages for about 96 KiB of copies in flight per SM (STAGES
        // - 1 rows per block while it works on one), as shared memory allows. A chunk whose floats do not
        // fit one block's registers keeps them anyway: a 12288-wide float32 layer norm at REGP 4 spills
        // 32-64 bytes and ran 57.3 us on the H200, streaming from shared memory (REGP 0) 63.0.
        const int64_t regs = 48 + int64_t(regp) * vec + weights * regp * 4;
        int bps = int(std::clamp<int64_t>(65536 / (block * regs), 1, std::min(16, 2048 / block)));
        int stages = int(std::clamp<int64_t>((96 * 1024 + bps * row - 1) / (bps * row) + 1, 2, 8));
        auto fits = [&] { return stages * row <= kSmemPerBlockMax && bps * (stages * row + kSmemPerBlockReserved) <= kSmemPerSm; };
        while (!fits() && stages > 2)
            --stages;
        while (!fits() && bps > 1)
            --bps;
        // Down to the space's values.
        for (int v : {16, 12, 8, 6, 4, 3, 2, 1})
            if (v <= bps) {
                bps = v;
                break;
            }
        if (stages == 5 || stages == 7)
            --stages;
        // Not every SM can host a block of a 16-block cluster at once: at 16, 90% of the clusters the SMs
        // would hold (H200: 2.6x faster than asking for all of them, which ran a second wave).
        J p = {{"cl", cl}, {"block", block}, {"stages", stages}, {"bps", bps}, {"fill", cl >= 16 ? 90 : 100}, {"regp", regp}};
        if (cudaSoftmaxFamily(family))
            p["fast_exp"] = 1;
        return p;
    };
    t.launch = [family](const J &p, const OperatorCard &card) {
        const int elem = dtypeSize(card.inputs.front().dtype), vec = 16 / elem, cl = p.value("cl", 1);
        const std::string per = "ceil_div(ceil_div(cols, " + std::to_string(cl) + "), " + std::to_string(vec) + ") * " + std::to_string(vec);
        const std::string smem = "min(" + std::to_string(int(p.at("stages"))) + " * ceil_div(" + per + " * " + std::to_string(elem)
                                 + ", 128) * 128, " + std::to_string(kSmemPerBlockMax) + ")";
        // Clusters: as many as BPS blocks per SM (FILL percent of them) give, at most one per row.
        const std::string clusters = "min(rows, max(1, sm_count * " + std::to_string(int(p.at("bps"))) + " * "
                                     + std::to_string(p.value("fill", 100)) + " / " + std::to_string(100 * cl) + "))";
        return cudaOneKernelPlan("kf_pipe", {cl > 1 ? clusters + " * " + std::to_string(cl) : clusters, 1, 1}, p.at("block"),
                                 cudaNormArgs(family), smem, cl);
    };
    return t;
}

} // namespace

void addCudaPipeTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax", "layer_norm", "rms_norm"})
        lib.add(pipeTemplate(f));
}

} // namespace kforge
