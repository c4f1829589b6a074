// CUDA templates for the families over a middle dimension ([outer, dim, inner], core/ops/cards.cpp) and
// for instance norm, in float32, float16 and bfloat16. Kernel text: resources/templates/anydim_*.cu.
// Threads run across inner, so loads are coalesced, and walk dim; a block may also cut dim among BY
// thread rows, and a reduction may cut it across SPLIT blocks (a second kernel combines them) when
// outer x inner alone would not fill the device. Contiguous rows (inner 1) are the last-dimension
// templates' case, which the reductions decline; the norms have a block-per-row kernel for them.
#include <algorithm>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

int64_t sym(const OperatorCard &card, const char *name)
{
    return card.shape.at(name);
}

// The widest vector (at most 16 bytes) that divides inner, so every row of dim starts aligned.
int vecDividing(const OperatorCard &card, int64_t inner)
{
    for (int v = cudaVecFor(card); v > 1; v /= 2)
        if (inner % v == 0)
            return v;
    return 1;
}

// Blocks of bx threads, each over bx * vec adjacent columns of inner, for every outer index.
int64_t columnBlocks(int64_t outer, int64_t inner, int bx, int vec)
{
    return outer * ((inner + int64_t(bx) * vec - 1) / (int64_t(bx) * vec));
}

int pow2AtLeast(int64_t n, int lo, int hi)
{
    int p = lo;
    while (p < hi && p < n)
        p *= 2;
    return p;
}

int elemBytes(const OperatorCard &card)
{
    return dtypeSize(card.inputs.front().dtype);
}

bool fitsVec(const J &p, const OperatorCard &card)
{
    return p.at("vec").get<int>() * elemBytes(card) <= 16;
}

std::string cols(const J &p)
{
    return std::to_string(p.at("bx").get<int>() * p.at("vec").get<int>());
}

KernelTemplate make(const std::string &family, const std::string &kind, const std::string &description,
                    std::map<std::string, std::vector<J>> space)
{
    KernelTemplate t;
    t.id = "cuda." + family + "." + kind;
    t.family = family;
    t.backend = "cuda";
    t.description = description;
    t.space = std::move(space);
    return t;
}

KernelTemplate reduction(const std::string &family, int op)
{
    const bool arg = op == 4 || op == 5;
    auto t = make(family, "strided", "BX x VEC inner columns per block, BY thread rows and SPLIT blocks down dim, shared-memory then workspace combine",
                  {{"bx", {32, 64, 128, 256}}, {"vec", {1, 2, 4, 8}}, {"by", {1, 2, 4, 8}}, {"split", {1, 2, 4, 8, 16, 32, 64}},
                   {"unroll", {1, 4, 8}}});
    // The thread rows' partials in shared memory (48 KiB static at most), and UNROLL x VEC loads in flight
    // beside the accumulators within the registers a thread of the block may have.
    auto smemFits = [arg](int bx, int by, int vec) { return (by > 1 ? int64_t(by) * bx * vec * (arg ? 12 : 4) : 0) <= 48 * 1024; };
    auto regsFit = [arg](int bx, int by, int vec, int unroll) { return unroll * vec + vec * (arg ? 3 : 1) + 40 <= std::min(255, 65536 / (bx * by)); };
    t.valid = [smemFits, regsFit](const J &p, const OperatorCard &card) {
        const int bx = p.at("bx"), by = p.at("by"), vec = p.at("vec"), split = p.at("split");
        return fitsVec(p, card) && bx * by <= 1024 && smemFits(bx, by, vec) && regsFit(bx, by, vec, p.at("unroll")) && sym(card, "inner") > 1
               && split <= std::max<int64_t>(1, sym(card, "dim") / by);
    };
    const bool extreme = op >= 2 && op <= 5;
    t.seed = [smemFits, regsFit, extreme](const OperatorCard &card) {
        const int64_t outer = sym(card, "outer"), dim = sym(card, "dim"), inner = sym(card, "inner");
        // Max, min and their indices take one column a thread: on the H200, at each of three swept shapes
        // (8 x 300 x 1000, 8 x 1200 x 250, 8 x 64 x 4096), single values beat the widest pack at the same
        // block, rows, split and unroll in the median for all four (1.05-1.33x), their seeds were 1.03-2.3x
        // faster at five shapes no sweep saw, and they leave the registers for 8 loads in flight. Sums keep
        // the widest pack.
        const int vec = extreme ? 1 : vecDividing(card, inner);
        // A warp across the columns, with thread rows down dim: the columns then give more blocks and dim
        // needs fewer cuts. On the H200, against the block as wide as inner: for max, min and their
        // indices faster at 11 of 12 float32 points (1.03-1.46x); for sums, means and products faster at
        // 11 of 15 points (1.07-1.55x), even at 1, slower at 3 (0.69-0.93x), the two worst at a dim of
        // 32-56; from 256 to 512 MB of input, warp rows of 512 bytes (16-byte packs) were 1.05-1.25x faster
        // at 4 of 4 points. Shorter warp rows (single values, smaller packs) only up to 64 MiB of input:
        // at 128 x 4096 x 4095 float32 (8.6 GB, KernelBench's reductions over dim 1) rows of 128 bytes
        // read at 60% of the copy rate where the wide block's 1 KiB rows read at 91%. Between: max over
        // 64 MiB ran 2.2x faster with the warp, from 128 MiB to 2 GiB the two were within 1%, at 8.6 GB
        // max ran 7% slower (argmax 4% faster), a 1023-wide sum at 512 MiB 29% slower.
        // 16-bit single values fill half a line, and there the wide block stays (8 thread rows ran
        // 0.83-0.86x of it at 128 x 64 x 2048 bfloat16). The thread rows: 8, fewer where dim gives a
        // thread row under 16 values, which the shared-memory combine does not repay (at dim 32-64, 2 or
        // 4 rows ran 1.0-1.5x as fast as 8; at dim 128-1000, 8 ran 1.0-1.24x as fast as 4).
        const int64_t warpRowBytes = 32 * vec * elemBytes(card), inputBytes = outer * dim * inner * elemBytes(card);
        const bool warpColumns = warpRowBytes >= 512 || (warpRowBytes >= 128 && inputBytes <= (int64_t(64) << 20));
        const int bx = warpColumns ? 32 : pow2AtLeast((inner + vec - 1) / vec, 32, 256);
        const int64_t blocks = columnBlocks(outer, inner, bx, vec);
        int by = warpColumns ? 8 : blocks >= kCudaFillBlocks ? 2 : 4;
        while (warpColumns && by > 2 && dim < 16 * by)
            by /= 2;
        while (by > 1 && !smemFits(bx, by, vec))
            by /= 2;
        int unroll = 8;
        while (unroll > 1 && !regsFit(bx, by, vec, unroll))
            unroll = unroll == 8 ? 4 : 1;
        // A split's combine kernel is a second launch. It pays where the columns leave the device under half
        // full, or where each block's share is large beside that launch: on the H200, at 160-256 column
        // blocks, a split of 2 ran 0.80-1.03x as fast as none at shares of 38-51 KiB, 1.07-1.30x at
        // 125-512 KiB. Each thread keeps at least 4 values of dim.
        const bool splitPays = blocks < kCudaFillBlocks / 2 || dim * bx * vec * elemBytes(card) >= 64 * 1024;
        int split = 1;
        while (splitPays && split < 64 && blocks * split < kCudaFillBlocks && int64_t(split) * 2 * by * 4 <= dim)
            split *= 2;
        return J{{"bx", bx}, {"vec", vec}, {"by", by}, {"split", split}, {"unroll", unroll}};
    };
    t.render = [id = t.id, op](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define OP " + std::to_string(op) + "\n" + cudaPrelude(card.inputs.front().dtype)
               + templateSource("anydim_reduce.cu");
    };
    t.launch = [arg](const J &p, const OperatorCard &) {
        const int split = p.at("split"), block = p.at("bx").get<int>() * p.at("by").get<int>();
        const J grid = {"outer * ceil_div(inner, " + cols(p) + ")", split, 1};
        if (split == 1)
            return cudaOneKernelPlan("kf_reduce_dim", grid, block, {"in:x", "out:y", "in:x", "in:x", "sym:outer", "sym:dim", "sym:inner"});
        const std::string n = "outer * inner * " + std::to_string(split);
        J ws = J::array({{{"name", "partv"}, {"bytes", n + " * 4"}}});
        if (arg)
            ws.push_back({{"name", "parti"}, {"bytes", n + " * 8"}});
        const std::string wi = arg ? "ws:parti" : "ws:partv";
        return J{{"kernels", J::array({{{"name", "kf_reduce_dim"}, {"grid", grid}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:partv", "ws:partv", wi, "sym:outer", "sym:dim", "sym:inner"}}},
                                       {{"name", "kf_reduce_dim_combine"}, {"grid", {"ceil_div(outer * inner, 256)", 1, 1}}, {"block", {256, 1, 1}},
                                        {"shared_bytes", "0"}, {"args", {"ws:partv", wi, "out:y", "sym:outer", "sym:dim", "sym:inner"}}}})},
                 {"workspace", ws}};
    };
    return t;
}

KernelTemplate normOverDim(const std::string &family, int code)
{
    std::map<std::string, std::vector<J>> space = {{"bx", {32, 64, 128, 256}}, {"vec", {1, 2, 4, 8}}, {"by", {1, 2, 4, 8}},
                                                   {"cache", {0, 4, 8, 16, 32, 64}}};
    if (code <= 1)
        space["fast_exp"] = {1, 0};
    auto t = make(family, "strided", "BX x VEC inner columns per block, BY thread rows down dim, the column's dim values in CACHE registers when they fit",
                  std::move(space));
    // The cached values, the statistics and the addresses must fit the registers a thread of this block
    // may have (ptxas spilled 16-bit packs of 8 with 8 cached rows at 512 threads).
    const auto regsFit = [](int bx, int by, int vec, int cache) {
        return bx * by <= 1024 && cache * vec <= 64 && cache * vec + 4 * vec + 40 <= std::min(255, 65536 / (bx * by));
    };
    t.valid = [regsFit](const J &p, const OperatorCard &card) {
        return fitsVec(p, card) && regsFit(p.at("bx"), p.at("by"), p.at("vec"), p.at("cache")) && sym(card, "inner") > 1;
    };
    t.seed = [code, regsFit](const OperatorCard &card) {
        const int64_t dim = sym(card, "dim"), inner = sym(card, "inner");
        // Packs of at most 4: a 16-bit pack of 8 leaves half the registers for cached rows.
        const int widest = std::min(4, vecDividing(card, inner));
        // The widest pack, then the fewest thread rows, whose registers hold the whole of dim: a column
        // held is read once, so narrower packs that hold it beat wider ones that read it twice (dim 300:
        // packs of 4 hold 8 x 16 = 128 values a column, single values 8 x 64; on the H200 at 8 x 300 x
        // 1000 the L2 norm ran 0.68x against 2.82x).
        const int64_t outer = sym(card, "outer");
        const auto blocksFor = [outer, inner](int bx, int vec) { return columnBlocks(outer, inner, bx, vec); };
        // A block spans 64 columns, or 32 where 64 would leave the device short of blocks (the L2 norm
        // at 8 x 300 x 1000: 2.96x at 32 columns, 2.82x at 64).
        const auto columnsFor = [inner, &blocksFor](int vec) {
            const int bx = pow2AtLeast((inner + vec - 1) / vec, 32, 64);
            return bx > 32 && blocksFor(bx, vec) < kCudaFillBlocks ? 32 : bx;
        };
        const auto withExp = [code](J p) {
            if (code <= 1)
                p["fast_exp"] = 1;
            return p;
        };
        for (int vec = widest; vec >= 1; vec /= 2)
            for (int b : {1, 2, 4, 8})
                for (int c : {4, 8, 16, 32, 64})
                    if (int64_t(b) * c >= dim && regsFit(columnsFor(vec), b, vec, c))
                        return withExp({{"bx", columnsFor(vec)}, {"vec", vec}, {"by", b}, {"cache", c}});
        // No register cache holds the column, so it is read twice. Parallelism first: where outer x
        // inner are too few columns to fill the device, narrower packs give more blocks, and 8 thread
        // rows with the largest cache that fits read as much of each column once as they can (dim 1200
        // over 8 x 250: packs of 2 with 4 rows and no cache made 16 blocks and ran at 0.11 of the
        // best, single values with 8 rows and 64 cached, 64 blocks).
        // Where the grid fills the device the widest pack with 4 rows and no cache stays (not measured
        // against a cache there).
        int vec = widest;
        while (vec > 1 && blocksFor(32, vec) < kCudaFillBlocks)
            vec /= 2;
        const int bx = columnsFor(vec);
        const bool shortGrid = blocksFor(bx, vec) < kCudaFillBlocks;
        const int by = shortGrid ? 8 : 4;
        int cache = shortGrid ? 64 : 0;
        while (cache > 0 && !regsFit(bx, by, vec, cache))
            cache = cache == 4 ? 0 : cache / 2;
        return withExp({{"bx", bx}, {"vec", vec}, {"by", by}, {"cache", cache}});
    };
    t.render = [id = t.id, code](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define FAMILY " + std::to_string(code) + "\n" + (code == 2 || code == 3 ? epsDefine(lastDoubleArg(card)) : "")
               + cudaPrelude(card.inputs.front().dtype) + templateSource("anydim_norm.cu");
    };
    t.launch = [](const J &p, const OperatorCard &) {
        return cudaOneKernelPlan("kf_norm_dim", {"outer * ceil_div(inner, " + cols(p) + ")", 1, 1}, p.at("bx").get<int>() * p.at("by").get<int>(),
                                 {"in:x", "out:y", "sym:outer", "sym:dim", "sym:inner"});
    };
    return t;
}

// Over the last dimension (inner 1) the strided kernel would give each row one thread: a block per row.
KernelTemplate normRows(const std::string &family, int code)
{
    std::map<std::string, std::vector<J>> space = {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"reg", {0, 4, 8, 16, 32}}, {"minb", {1, 2}}};
    if (code <= 1)
        space["fast_exp"] = {1, 0};
    auto t = make(family, "rows", "a block per row of dim (inner 1), the row in REG registers per thread where it fits, else read twice",
                  std::move(space));
    auto regsFit = [](int block, int vec, int reg, int minb) {
        return reg * vec + 2 * vec + 32 <= std::min(255, 65536 / (block * minb));
    };
    t.valid = [regsFit](const J &p, const OperatorCard &card) {
        return fitsVec(p, card) && sym(card, "inner") == 1 && regsFit(p.at("block"), p.at("vec"), p.at("reg"), p.at("minb"));
    };
    t.seed = [code, regsFit](const OperatorCard &card) {
        const int64_t dim = sym(card, "dim");
        const int vec = std::min(4, vecDividing(card, dim));
        // The smallest block and register cache that hold the row; else 1024 threads reading it twice,
        // one block per SM so the rows in flight stay in L2 for the second read.
        J p = {{"block", 1024}, {"vec", vec}, {"reg", 0}, {"minb", 1}};
        for (int block : {256, 512, 1024}) {
            for (int reg : {4, 8, 16, 32})
                if (int64_t(block) * vec * reg >= dim && regsFit(block, vec, reg, 1)) {
                    p["block"] = block;
                    p["reg"] = reg;
                    break;
                }
            if (p.at("reg").get<int>() > 0)
                break;
        }
        if (code <= 1)
            p["fast_exp"] = 1;
        return p;
    };
    t.render = [id = t.id, code](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define FAMILY " + std::to_string(code) + "\n" + (code == 2 || code == 3 ? epsDefine(lastDoubleArg(card)) : "")
               + cudaPrelude(card.inputs.front().dtype) + templateSource("anydim_norm_rows.cu");
    };
    t.reads = [](const J &p, const OperatorCard &card) {
        // Once when the registers hold the row; else twice, a row per block in flight.
        const int block = p.at("block"), vec = p.at("vec"), reg = p.at("reg");
        const int64_t dim = sym(card, "dim");
        if (reg > 0 && int64_t(block) * vec * reg >= dim)
            return 1;
        return cudaRereads(dim * elemBytes(card), std::min(sym(card, "outer"), kCudaResidentThreads / block));
    };
    t.launch = [](const J &p, const OperatorCard &) {
        return cudaOneKernelPlan("kf_norm_rows", {"outer * inner", 1, 1}, p.at("block"), {"in:x", "out:y", "sym:outer", "sym:dim", "sym:inner"});
    };
    return t;
}

KernelTemplate instanceNorm()
{
    auto t = make("instance_norm", "split", "each (sample, channel) row cut into SPLIT chunks: chunk statistics, then each chunk merges its row's and normalizes",
                  {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"split", {1, 2, 4, 8, 16, 32, 64}}});
    t.valid = [](const J &p, const OperatorCard &card) { return fitsVec(p, card); };
    t.seed = [](const OperatorCard &card) {
        const int64_t rows = sym(card, "n") * sym(card, "c"), hw = sym(card, "hw");
        const int vec = vecDividing(card, hw);
        // Chunks of about 16K elements, and enough of them to fill the device.
        int split = 1;
        while (split < 64 && (hw / (split * 2) >= 16384 || rows * split < kCudaFillBlocks) && hw / (split * 2) >= 1024)
            split *= 2;
        return J{{"block", 256}, {"vec", vec}, {"split", split}};
    };
    t.reads = [](const J &, const OperatorCard &card) {
        // The statistics kernel reads every plane before the second kernel reads them again.
        return cudaRereads(sym(card, "hw") * elemBytes(card), sym(card, "n") * sym(card, "c"));
    };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + epsDefine(lastDoubleArg(card)) + cudaPrelude(card.inputs.front().dtype) + templateSource("anydim_instance_norm.cu");
    };
    t.launch = [](const J &p, const OperatorCard &) {
        const int split = p.at("split");
        const int block = p.at("block");
        const std::string blocks = "n * c * " + std::to_string(split);
        return J{{"kernels", J::array({{{"name", "kf_inorm_stats"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:part", "i64:n * c", "sym:hw"}}},
                                       {{"name", "kf_inorm_apply"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:part", "out:y", "i64:n * c", "sym:hw"}}}})},
                 {"workspace", J::array({{{"name", "part"}, {"bytes", blocks + " * 12"}}})}};
    };
    return t;
}

} // namespace

void addCudaAnyDimTemplates(TemplateLibrary &lib)
{
    for (const auto &[family, op] : std::vector<std::pair<std::string, int>>{
             {"sum_dim", 0}, {"mean_dim", 1}, {"max_dim", 2}, {"min_dim", 3}, {"argmax_dim", 4}, {"argmin_dim", 5}, {"prod_dim", 6}})
        lib.add(reduction(family, op));
    for (const auto &[family, code] : std::vector<std::pair<std::string, int>>{
             {"softmax_dim", 0}, {"log_softmax_dim", 1}, {"rms_norm_dim", 2}, {"l2_norm_dim", 3}, {"l1_norm_dim", 4}})
    {
        lib.add(normOverDim(family, code));
        lib.add(normRows(family, code));
    }
    lib.add(instanceNorm());
}

} // namespace kforge
