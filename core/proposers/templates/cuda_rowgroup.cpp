// `cuda.<softmax|log_softmax>.rowgroup`: vocabulary-length rows (hundreds of thousands of elements)
// read from memory once, without thread-block clusters.
//
// A row is cut into SPLIT chunks, one per block, each kept in shared memory. A block posts its chunk's
// (max, sum of exp) to a workspace and counts itself in the row's counter; once all SPLIT have posted
// it merges them and writes its chunk. The cluster template does the same through distributed shared
// memory, but a cluster must fit in one GPC, so on the H200 only 21 clusters of 16 (336 of 396 block
// slots) run at once and the SMs idle 13-14% of the time; plain blocks fill every slot.
//
// Waiting on other blocks assumes they run at the same time. The blocks of a row are consecutive in
// the grid, so they are dispatched together, but nothing guarantees it: a block that has waited long
// (about 0.1 s) stops waiting and computes the row's statistics from global memory itself. That is
// slow but correct, and the kernel cannot hang.
#include <algorithm>
#include <string>
#include <vector>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

const std::vector<J> kSplits = {4, 8, 12, 16, 24, 32, 48, 64};

KernelTemplate rowGroupTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "rowgroup",
                                        "a long row cut across SPLIT plain blocks, each chunk kept in shared memory, partial "
                                        "statistics exchanged through a workspace and a per-row counter",
                                        {{"split", kSplits}, {"block", {128, 256, 512, 1024}},
                                         {"vec", {1, 2, 4, 8}}, {"unroll", {1, 2, 4, 8}}, {"tma", {0, 1, 2}}, {"minb", {0, 4, 5, 6, 7, 8}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const int split = p.at("split"), vec = p.at("vec"), block = p.at("block"), elem = dtypeSize(card.inputs.front().dtype);
        const int64_t cols = card.shape.count("cols") ? card.shape.at("cols") : 0;
        // Only rows too long for one block's shared memory to hold comfortably (the rows and cluster
        // templates serve the rest), in chunks between 8 KiB and what shared memory holds, with a pack
        // for every thread, and no more threads than an SM runs.
        const int64_t chunk = cudaChunkBytes(cols, split, vec, elem);
        return vec * elem <= 16 && cols * elem > 96 * 1024 && chunk >= 8 * 1024 && chunk <= kCudaChunkSmemCap
               && (cols / split + vec - 1) / vec >= block && p.at("minb").get<int>() * block <= 2048;
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".rowgroup\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family))) + defineLine("SPLIT", p.at("split"));
        s += defineLine("BLOCK", p.at("block")) + defineLine("VEC", p.at("vec")) + defineLine("UNROLL", p.at("unroll"));
        s += defineLine("TMA", p.at("tma")) + defineLine("MINB", p.at("minb"));
        s += defineLine("FAST_EXP", p.at("fast_exp"));
        return s + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + cudaPackHelpers() + templateSource("rowgroup.cu");
    };
    t.seed = [](const OperatorCard &card) {
        // Chunks of at most 32 KiB, four packs in flight per thread: on the H200 a 1 MiB float32 row ran
        // best in 32 chunks (602-607 us; 16 chunks 668 us, 48 chunks 893 us; two packs in flight 666 us).
        // MINB holds registers to what as many blocks as shared memory admits need: 16-bit seeds took 121
        // registers without it, two blocks per SM, slower than ATen (603 us against 348 us for a 512 KiB
        // bfloat16 row). There two packs in flight and asynchronous copies ran best.
        const DType dt = card.inputs.front().dtype;
        const int vec = cudaVecFor(card), elem = dtypeSize(dt);
        const int64_t cols = card.shape.at("cols");
        int split = kSplits.back().get<int>(), block = 256;
        for (const J &sp : kSplits)
            if (cudaChunkBytes(cols, sp.get<int>(), vec, elem) <= 32 * 1024) {
                split = sp.get<int>();
                break;
            }
        const int64_t chunk = cudaChunkBytes(cols, split, vec, elem);
        // Six blocks of 256 threads leave 40 registers, the least this kernel compiles to without
        // spilling (five for float16, whose conversions take more).
        const int regBound = dt == DType::F16 ? 5 : 6;
        int minb = int(std::min<int64_t>({regBound, 2048 / block, (kCudaChunkSmemCap + 1024) / (chunk + 1024)}));
        if (minb < 4)
            minb = 0;
        return J{{"split", split}, {"block", block}, {"vec", vec}, {"unroll", elem == 4 ? 4 : 2}, {"tma", elem == 4 ? 0 : 2},
                 {"minb", minb}, {"fast_exp", 1}};
    };
    t.launch = [](const J &p, const OperatorCard &card) {
        // Two kernels: every partial slot marked unposted and every row counter zeroed (workspaces arrive
        // poisoned), then the row groups.
        const int split = p.at("split"), vec = p.at("vec"), elem = dtypeSize(card.inputs.front().dtype);
        const std::string slots = "rows * " + std::to_string(split);
        J plan = cudaOneKernelPlan("kf_rowgroup", {slots, 1, 1}, p.at("block"), {"in:x", "out:y", "ws:part", "ws:count", "sym:rows", "sym:cols"},
                                   cudaChunkSmemExpr("cols", split, vec, elem), 1,
                                   {{{"name", "part"}, {"bytes", slots + " * 8"}}, {{"name", "count"}, {"bytes", "rows * 4"}}});
        const J reset = cudaOneKernelPlan("kf_rowgroup_reset", {"ceil_div(" + slots + ", 256)", 1, 1}, 256,
                                          {"ws:part", "ws:count", "i64:" + slots, "sym:rows"});
        plan["kernels"].insert(plan["kernels"].begin(), reset["kernels"][0]);
        return plan;
    };
    return t;
}

} // namespace

void addCudaRowGroupTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax"})
        lib.add(rowGroupTemplate(f));
}

} // namespace kforge
