// CUDA templates that read each row (or normalization group) from memory exactly once, however long it
// is: `cuda.<family>.cluster` for softmax, log-softmax, layer norm, RMS norm and group norm.
//
// A row is cut into CL chunks, one per block of a thread-block cluster (CL = 1: a plain block per row).
// Each block keeps its chunk in shared memory while it computes the chunk's statistics, the blocks of
// a cluster exchange their partial statistics through distributed shared memory (sm_90), and each
// block writes its chunk from shared memory. A 262144-wide float32 row (1 MiB) fits in a cluster of 8 (or 16, sm_90's non-portable size);
// a 64-channel-group of a diffusion activation in a cluster of 2 to 4. When a held-out shape's chunk
// does not fit the shared memory the plan gave, the block re-reads its chunk instead (correct, slower).
#include <algorithm>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// Elements in the row or group one cluster normalizes.
int64_t segmentLength(const OperatorCard &card)
{
    if (card.family == "group_norm")
        return card.shape.at("c") / std::max<int64_t>(1, card.shape.at("groups")) * card.shape.at("hw");
    return card.shape.at("cols");
}

KernelTemplate clusterTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "cluster",
                                        "a row (or group) read once: cut across a cluster of CL blocks, each chunk kept in shared "
                                        "memory, partial statistics exchanged through distributed shared memory",
                                        {{"cl", {1, 2, 4, 8, 16}}, {"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}},
                                         {"unroll", {1, 2, 4, 8}}, {"occ", {0, 1024, 1536, 2048}}, {"tma", {0, 1}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const int cl = p.at("cl"), vec = p.at("vec"), block = p.at("block");
        const int elem = dtypeSize(card.inputs.front().dtype);
        const int64_t len = segmentLength(card);
        if (vec * elem > 16)
            return false;
        // A chunk that does not fit shared memory would be read twice: that is the rows template's job.
        if (cudaChunkBytes(len, cl, vec, elem) > kCudaChunkSmemCap)
            return false;
        // A cluster only for segments too long for fewer blocks: on the H200 every cluster whose halves
        // held 48 KiB or less lost to the smaller cluster (4096-wide rows 1.2-12x slower at 8 and 16
        // blocks, a 16384x8192 bf16 layer norm 1.7x slower at 2).
        if (cl > 1 && cudaChunkBytes(len, cl / 2, vec, elem) <= 48 * 1024)
            return false;
        // More threads, or more blocks, than a chunk has packs only idle.
        const int64_t packs = (len / cl + vec - 1) / vec;
        return cl == 1 || packs >= block;
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".cluster\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family))) + defineLine("BLOCK", p.at("block"));
        s += defineLine("VEC", p.at("vec")) + defineLine("UNROLL", p.at("unroll")) + defineLine("FAST_EXP", p.value("fast_exp", 1));
        s += defineLine("OCC", p.value("occ", 0)) + defineLine("TMA", p.value("tma", 0));
        s += epsDefine(referenceEps(card));
        return s + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + cudaPackHelpers() + templateSource("cluster.cu");
    };
    t.seed = [family](const OperatorCard &card) {
        const int vec = cudaVecFor(card), elem = dtypeSize(card.inputs.front().dtype);
        const int64_t len = segmentLength(card);
        // The smallest cluster whose chunks leave room for two or more blocks per SM.
        int cl = 1;
        while (cl < 16 && cudaChunkBytes(len, cl, vec, elem) > 96 * 1024)
            cl *= 2;
        const int64_t packs = (len / cl + vec - 1) / vec;
        int block = 128;
        while (block < 1024 && packs > int64_t(block) * 16)
            block *= 2;
        // The bulk copy where every chunk is 16-byte aligned; unroll 8 for the register-staged neighbour.
        const bool aligned = len * elem % 16 == 0;
        J p = {{"cl", cl}, {"block", block}, {"vec", vec}, {"unroll", 8}, {"occ", 0}, {"tma", aligned ? 1 : 0}};
        if (cudaSoftmaxFamily(family))
            p["fast_exp"] = 1;
        return p;
    };
    t.launch = [family](const J &p, const OperatorCard &card) {
        const int cl = p.at("cl"), vec = p.at("vec"), elem = dtypeSize(card.inputs.front().dtype);
        const bool group = family == "group_norm";
        const std::string len = group ? "c / groups * hw" : "cols";
        const std::string segs = group ? "n * groups" : "rows";
        return cudaOneKernelPlan("kf_cluster", {segs + " * " + std::to_string(cl), 1, 1}, p.at("block"), cudaNormArgs(family),
                                 cudaChunkSmemExpr(len, cl, vec, elem), cl);
    };
    return t;
}

} // namespace

void addCudaClusterTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax", "layer_norm", "rms_norm", "group_norm"})
        lib.add(clusterTemplate(f));
}

} // namespace kforge
