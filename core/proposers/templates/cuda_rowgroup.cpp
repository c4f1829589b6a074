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

// Two kernels: every partial slot marked unposted and every row counter zeroed (workspaces arrive
// poisoned), then the row groups over `rows` rows of `cols` elements (launch-plan expressions), their
// elements `inner` apart where the kernel takes it.
J rowGroupPlan(const std::string &kernel, const std::string &rows, const std::string &cols, const J &p, const OperatorCard &card,
               const std::string &inner = "")
{
    const int split = p.at("split"), vec = p.at("vec"), elem = dtypeSize(card.inputs.front().dtype);
    const std::string slots = rows + " * " + std::to_string(split);
    J args = {"in:x", "out:y", "ws:part", "ws:count", "i64:" + rows, "i64:" + cols};
    if (!inner.empty())
        args.push_back("i64:" + inner);
    // A row is chunked from its pack-aligned start, up to vec - 1 elements before it (row_packs.cuh).
    J plan = cudaOneKernelPlan(kernel, {slots, 1, 1}, p.at("block"), args,
                               cudaChunkSmemExpr("(" + cols + " + " + std::to_string(vec - 1) + ")", split, vec, elem), 1,
                               {{{"name", "part"}, {"bytes", slots + " * 8"}}, {{"name", "count"}, {"bytes", rows + " * 4"}}});
    const J reset = cudaOneKernelPlan("kf_rowgroup_reset", {"ceil_div(" + slots + ", 256)", 1, 1}, 256,
                                      {"ws:part", "ws:count", "i64:" + slots, "i64:" + rows});
    plan["kernels"].insert(plan["kernels"].begin(), reset["kernels"][0]);
    return plan;
}

// Blocks of `block` threads with `chunkBytes` of shared memory each that an SM holds at once, as
// shared memory and its 2048 thread slots allow.
int64_t blocksPerSm(int block, int64_t chunkBytes)
{
    return std::min<int64_t>(2048 / block, (kCudaChunkSmemCap + 1024) / (chunkBytes + 1024));
}

// MINB for a seed: as many blocks as shared memory admits, registers permitting (six blocks of 256
// threads leave 40 registers, the least these kernels compile to without spilling; five for float16,
// whose conversions take more); 0 (no bound) below four.
int seedMinBlocks(DType dt, int block, int64_t chunkBytes)
{
    const int regBound = dt == DType::F16 ? 5 : 6;
    const int minb = int(std::min<int64_t>(regBound, blocksPerSm(block, chunkBytes)));
    return minb < 4 ? 0 : minb;
}

// The rules both kinds of row group share. Valid: rows too long for one block's shared memory to hold
// comfortably (the rows and cluster templates serve the rest), in chunks between 8 KiB and what shared
// memory holds, with a pack for every thread, and no more threads than an SM runs.
bool rowGroupFits(const J &p, int64_t cols, int elem)
{
    const int split = p.at("split"), vec = p.at("vec"), block = p.at("block");
    const int64_t chunk = cudaChunkBytes(cols, split, vec, elem);
    return vec * elem <= 16 && cols * elem > 96 * 1024 && chunk >= 8 * 1024 && chunk <= kCudaChunkSmemCap
           && (cols / split + vec - 1) / vec >= block && p.at("minb").get<int>() * block <= 2048;
}

// Seed: the fewest chunks of at most 32 KiB (the most chunks the list has where none is that small).
int fewestSmallChunks(const std::vector<J> &splits, int64_t cols, int vec, int elem)
{
    for (const J &sp : splits)
        if (cudaChunkBytes(cols, sp.get<int>(), vec, elem) <= 32 * 1024)
            return sp.get<int>();
    return splits.back().get<int>();
}

// The defines every row-group kernel takes.
std::string rowGroupDefines(const std::string &id, int family, const J &p)
{
    std::string s = "// template " + id + "\n";
    s += defineLine("FAMILY", std::to_string(family)) + defineLine("SPLIT", p.at("split"));
    s += defineLine("BLOCK", p.at("block")) + defineLine("VEC", p.at("vec")) + defineLine("UNROLL", p.at("unroll"));
    s += defineLine("TMA", p.at("tma")) + defineLine("MINB", p.at("minb"));
    // How long a waiting block sleeps between looks at its row's counter (rowgroup_sync.cuh's default
    // where absent; not searched: for measuring the cost of the wait by hand).
    if (p.contains("spin_ns"))
        s += defineLine("KF_SPIN_NS", p.at("spin_ns"));
    return s;
}

KernelTemplate rowGroupTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "rowgroup",
                                        "a long row cut across SPLIT plain blocks, each chunk kept in shared memory, partial "
                                        "statistics exchanged through a workspace and a per-row counter",
                                        {{"split", kSplits}, {"block", {128, 256, 512, 1024}},
                                         {"vec", {1, 2, 4, 8}}, {"unroll", {1, 2, 4, 8}}, {"tma", {0, 1, 2}}, {"minb", {0, 4, 5, 6, 7, 8}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        return rowGroupFits(p, card.shape.count("cols") ? card.shape.at("cols") : 0, dtypeSize(card.inputs.front().dtype));
    };
    t.render = [id = t.id, family](const J &p, const OperatorCard &card) {
        return rowGroupDefines(id, cudaNormFamilyCode(family), p) + defineLine("FAST_EXP", p.at("fast_exp")) + cudaPrelude(card.inputs.front().dtype)
               + cudaBlockHelpers() + cudaPackHelpers() + templateSource("row_packs.cuh") + templateSource("rowgroup_sync.cuh") + templateSource("rowgroup.cu");
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
        const int split = fewestSmallChunks(kSplits, cols, vec, elem), block = 256;
        const int minb = seedMinBlocks(dt, block, cudaChunkBytes(cols, split, vec, elem));
        return J{{"split", split}, {"block", block}, {"vec", vec}, {"unroll", elem == 4 ? 4 : 2}, {"tma", elem == 4 ? 0 : 2},
                 {"minb", minb}, {"fast_exp", 1}};
    };
    t.launch = [](const J &p, const OperatorCard &card) { return rowGroupPlan("kf_rowgroup", "rows", "cols", p, card); };
    return t;
}

// The sum and variance norms over rows too long for one block: RMS, L2 and L1 norm over a last
// dimension (inner 1; FAMILY as anydim_norm_rows.cu) and instance norm over its (sample, channel)
// planes (a group norm's groups too, through its [n, G, c/G * hw] view). The ATen kernels and the
// block-per-row and split templates read such a row twice; this reads it once.
// A card over dim is valid here only with inner 1, but its held-out shapes have inner > 1: the kernel
// serves those too (correct, not fast), so rows count every (outer, inner) column.
struct NormRows {
    std::string family;
    int code;         // FAMILY in rowgroup_norm.cu
    std::string rows;  // launch-plan expression over the card's shape symbols
    std::string cols;  // the symbol of the row's length
    std::string inner; // launch-plan expression of the elements' stride
};

const std::vector<NormRows> kNormRows = {{"rms_norm_dim", 2, "outer * inner", "dim", "inner"},
                                         {"l2_norm_dim", 3, "outer * inner", "dim", "inner"},
                                         {"l1_norm_dim", 4, "outer * inner", "dim", "inner"},
                                         {"instance_norm", 5, "n * c", "hw", "1"}};

// Past 64 chunks for an instance norm of a group norm's groups (8 MiB rows in 256 chunks of 32 KiB).
const std::vector<J> kNormSplits = {4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256};

KernelTemplate rowGroupNormTemplate(const NormRows &f)
{
    KernelTemplate t = cudaNormTemplate(f.family, "rowgroup",
                                        "a long row cut across SPLIT plain blocks, each chunk kept in shared memory, its sum (or mean and "
                                        "M2) exchanged through a workspace and a per-row counter: each element read once",
                                        {{"split", kNormSplits}, {"block", {128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"unroll", {1, 2, 4, 8}},
                                         {"tma", {0, 1, 2}}, {"minb", {0, 4, 5, 6, 7, 8}}});
    t.valid = [f](const J &p, const OperatorCard &card) {
        if (card.shape.count("inner") && card.shape.at("inner") != 1)
            return false;
        const int64_t cols = card.shape.at(f.cols);
        const int64_t chunk = cudaChunkBytes(cols, p.at("split"), p.at("vec"), dtypeSize(card.inputs.front().dtype));
        // As the softmax row groups, and every block of a row resident at once on the device's SMs, or
        // its blocks would wait out the spin limit and read the row again.
        return rowGroupFits(p, cols, dtypeSize(card.inputs.front().dtype))
               && p.at("split").get<int>() <= kCudaFillBlocks / 2 * blocksPerSm(p.at("block"), chunk);
    };
    t.render = [id = t.id, f](const J &p, const OperatorCard &card) {
        return rowGroupDefines(id, f.code, p) + epsDefine(lastDoubleArg(card)) + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers()
               + cudaPackHelpers() + templateSource("chunk_stats.cuh") + templateSource("row_packs.cuh") + templateSource("rowgroup_sync.cuh") + templateSource("rowgroup_norm.cu");
    };
    t.seed = [f](const OperatorCard &card) {
        // The softmax row groups' rule: the fewest chunks of at most 32 KiB, 256 threads, four packs in
        // flight for 32-bit types and asynchronous copies for 16-bit ones.
        const DType dt = card.inputs.front().dtype;
        const int elem = dtypeSize(dt), block = 256;
        const int64_t cols = card.shape.at(f.cols);
        const int vec = cudaVecFor(card); // a row of any length is read in aligned packs
        const int split = fewestSmallChunks(kNormSplits, cols, vec, elem);
        return J{{"split", split},
                 {"block", block},
                 {"vec", vec},
                 {"unroll", elem == 4 ? 4 : 2},
                 {"tma", elem == 4 ? 0 : 2},
                 // Instance norm carries three sums and a shift: at six blocks (40 registers) bfloat16 spilled.
                 {"minb", std::min(f.code == 5 ? 5 : 8, seedMinBlocks(dt, block, cudaChunkBytes(cols, split, vec, elem)))}};
    };
    t.launch = [f](const J &p, const OperatorCard &card) { return rowGroupPlan("kf_rowgroup_norm", f.rows, f.cols, p, card, f.inner); };
    return t;
}

} // namespace

void addCudaRowGroupTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax"})
        lib.add(rowGroupTemplate(f));
    for (const auto &f : kNormRows)
        lib.add(rowGroupNormTemplate(f));
}

} // namespace kforge
