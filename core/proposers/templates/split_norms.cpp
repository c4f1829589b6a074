// Normalizations whose statistics span more than a block should hold, as statistics of chunks posted to
// a workspace, merged, then a normalize pass (kernel text: resources/templates/chunk_stats.cuh with
// batch_norm.cu, frobenius.cu and long_rows.cu; CPU: cpu_batch_norm.cpp, cpu_frobenius.cpp):
//  - batch norm over [n, c, hw]: a channel's statistics span n and hw, and there may be fewer channels
//    than SMs, so each (sample, channel) row is cut into PIECES chunks;
//  - the Frobenius normalization: one statistic over the whole tensor, a grid-wide reduction;
//  - layer, RMS and group norm over few long rows or groups (16 rows of 4M elements would be 16 blocks of
//    the rows template): each row cut into SPLIT chunks.
#include <cstdio>
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// Blocks enough to fill an H200 eight times over (132 SMs): chunks are cut smaller until there are.
constexpr int64_t kManyBlocks = 1056;

int elemBytes(const OperatorCard &card)
{
    return dtypeSize(card.inputs.front().dtype);
}

// The widest pack (at most 16 bytes) that divides len, so every segment of len starts aligned.
int packDividing(const OperatorCard &card, int64_t len)
{
    for (int v = cudaVecFor(card); v > 1; v /= 2)
        if (len % v == 0)
            return v;
    return 1;
}

// A chunk count for segments of len: halve chunks while they stay large (above 32K elements) or the grid
// of rows * chunks is short of kManyBlocks, never below minChunk elements a chunk.
int chunksFor(int64_t rows, int64_t len, int most, int64_t minChunk)
{
    int parts = 1;
    while (parts < most && len / (int64_t(parts) * 2) >= minChunk && (len / parts > 32768 || rows * parts < kManyBlocks))
        parts *= 2;
    return parts;
}

// The training batch norms' pieces a row: a row shorter than 32K elements stays whole, a longer one is cut
// as chunksFor cuts it (to its length and to fill the device). Every chunk's partial statistics are
// combined per channel; a short row is read in a few microseconds, less than cutting it costs the
// combine, while a long one gains the blocks. On an H200 and an H100 this was within 3% of the best
// pieces in 13 of 13 training cases (hw 3136-16384: one piece ahead of the fill rule by 3-28%; hw 32768-1M:
// the fill rule's 4-32 ahead of fewer by 2-42%), the fill rule alone in 7: bench/RESULTS-search.md.
int batchNormPieces(int64_t rows, int64_t hw)
{
    return hw >= 32768 ? chunksFor(rows, hw, 64, 1024) : 1;
}

int batchNormMode(const std::string &family)
{
    return family == "batch_norm" ? 0 : family == "batch_norm_affine" ? 1 : 2;
}

KernelTemplate cudaBatchNorm(const std::string &family)
{
    const int mode = batchNormMode(family);
    KernelTemplate t;
    t.id = "cuda." + family + ".split";
    t.family = family;
    t.backend = "cuda";
    t.description = mode == 2 ? "a block per chunk of a (sample, channel) row: (x - running mean) * rstd * w + b"
                              : "each (sample, channel) row cut into PIECES chunks: chunk statistics, a warp per channel merges them, "
                                "then a block per chunk normalizes (REVERSE: the chunks last read first)";
    t.space = {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"pieces", {1, 2, 4, 8, 16, 32, 64}}, {"reverse", {1, 0}}};
    t.valid = [](const J &p, const OperatorCard &card) { return p.at("vec").get<int>() * elemBytes(card) <= 16; };
    t.seed = [mode](const OperatorCard &card) {
        const int64_t rows = card.shape.at("n") * card.shape.at("c"), hw = card.shape.at("hw");
        // Eval mode has no combine: its chunks may fill the device.
        const int pieces = mode == 2 ? chunksFor(rows, hw, 64, 1024) : batchNormPieces(rows, hw);
        return J{{"block", 256}, {"vec", packDividing(card, hw)}, {"pieces", pieces}, {"reverse", 1}};
    };
    t.render = [id = t.id, mode](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define MODE " + std::to_string(mode) + "\n" + epsDefine(lastDoubleArg(card))
               + cudaPrelude(card.inputs.front().dtype) + templateSource("chunk_stats.cuh") + templateSource("batch_norm.cu");
    };
    t.launch = [mode](const J &p, const OperatorCard &) {
        const std::string blocks = "n * c * " + p.at("pieces").dump();
        const int block = p.at("block");
        const J apply = {{"name", "kf_bn_apply"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                         {"args", {"in:x", mode == 2 ? "in:x" : "ws:stats", mode >= 1 ? "in:weight" : "in:x", mode >= 1 ? "in:bias" : "in:x",
                                   mode == 2 ? "in:running_mean" : "in:x", mode == 2 ? "in:running_var" : "in:x", "out:y", "sym:n", "sym:c",
                                   "sym:hw"}}};
        if (mode == 2)
            return J{{"kernels", J::array({apply})}, {"workspace", J::array()}};
        return J{{"kernels", J::array({{{"name", "kf_bn_stats"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:part", "sym:n", "sym:c", "sym:hw"}}},
                                       {{"name", "kf_bn_combine"}, {"grid", {"c", 1, 1}}, {"block", {32, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"ws:part", "ws:stats", "sym:n"}}},
                                       apply})},
                 {"workspace", J::array({{{"name", "part"}, {"bytes", blocks + " * 12"}}, {{"name", "stats"}, {"bytes", "c * 8"}}})}};
    };
    return t;
}

KernelTemplate cudaFrobenius()
{
    KernelTemplate t;
    t.id = "cuda.frobenius_norm.grid";
    t.family = "frobenius_norm";
    t.backend = "cuda";
    t.description = "GRID blocks stride over the tensor with UNROLL packs in flight, squares summed in double; one warp combines "
                    "the block totals into the norm; then y = x / norm, a pack a thread";
    t.space = {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"grid", {264, 528, 1056, 2112}}, {"unroll", {1, 2, 4, 8}}};
    t.valid = [](const J &p, const OperatorCard &card) {
        // The unrolled packs and the double accumulator fit the registers a thread of the block may have.
        const int vec = p.at("vec"), unroll = p.at("unroll"), block = p.at("block");
        return vec * elemBytes(card) <= 16 && unroll * vec + 32 <= 65536 / block;
    };
    t.seed = [](const OperatorCard &card) {
        // Four blocks of 256 per SM resident at once (a grid-stride loop whose blocks run in waves has a
        // tail), each thread with four 16-byte loads in flight.
        return J{{"block", 256}, {"vec", packDividing(card, card.shape.at("rows") * card.shape.at("cols"))}, {"grid", 528}, {"unroll", 4}};
    };
    t.render = [id = t.id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + templateSource("frobenius.cu");
    };
    t.launch = [](const J &p, const OperatorCard &) {
        const std::string grid = p.at("grid").dump();
        const int block = p.at("block");
        const std::string scaleGrid = "ceil_div(rows * cols, " + std::to_string(block * p.at("vec").get<int>()) + ")";
        return J{{"kernels", J::array({{{"name", "kf_fro_partial"}, {"grid", {grid, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:part", "i64:rows * cols"}}},
                                       {{"name", "kf_fro_combine"}, {"grid", {1, 1, 1}}, {"block", {32, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"ws:part", "ws:norm"}}},
                                       // A pack a thread: the scale pass has no loop-carried state, and a grid of GRID
                                       // blocks left one 16-byte load in flight per thread, too few to keep memory busy.
                                       {{"name", "kf_fro_scale"}, {"grid", {scaleGrid, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:norm", "out:y", "i64:rows * cols"}}}})},
                 {"workspace", J::array({{{"name", "part"}, {"bytes", grid + " * 8"}}, {{"name", "norm"}, {"bytes", "8"}}})}};
    };
    return t;
}

// A long-row family's rows and their length: a group norm's row is a (sample, group), c / groups * hw
// contiguous elements.
int64_t segmentRows(const OperatorCard &card)
{
    return card.family == "group_norm" ? card.shape.at("n") * card.shape.at("groups") : card.shape.at("rows");
}

int64_t segmentLength(const OperatorCard &card)
{
    if (card.family == "group_norm")
        return card.shape.at("groups") > 0 ? card.shape.at("c") / card.shape.at("groups") * card.shape.at("hw") : 0;
    return card.shape.count("cols") ? card.shape.at("cols") : 0;
}

KernelTemplate cudaLongRows(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "split",
                                        "a long row cut into SPLIT chunks across blocks: chunk statistics, then each block merges its row's "
                                        "(one warp, in double) and normalizes its chunk (REVERSE: the chunks last read first)",
                                        {{"split", {2, 4, 8, 16, 32, 64, 128, 256}}, {"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}},
                                         {"reverse", {1, 0}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        // Only rows that give every thread of every chunk four packs or more: shorter rows are the rows
        // template's, in registers.
        const int64_t cols = segmentLength(card);
        const int vec = p.at("vec");
        return vec * elemBytes(card) <= 16 && cols >= int64_t(p.at("split").get<int>()) * p.at("block").get<int>() * vec * 4;
    };
    t.seed = [](const OperatorCard &card) {
        // Chunks of at least four packs per thread of 512, which valid asks for.
        const int64_t rows = segmentRows(card), cols = segmentLength(card);
        // A group norm's packs stay inside a channel: hw divides them.
        const int vec = packDividing(card, card.family == "group_norm" ? card.shape.at("hw") : cols);
        return J{{"split", std::max(2, chunksFor(rows, cols, 256, 512 * vec * 4))}, {"block", 512}, {"vec", vec}, {"reverse", 1}};
    };
    t.reads = [](const J &, const OperatorCard &card) {
        // Every segment's statistics are posted before any is normalized.
        return cudaRereads(segmentLength(card) * elemBytes(card), segmentRows(card));
    };
    t.render = [id = t.id, family](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + "#define FAMILY " + std::to_string(cudaNormFamilyCode(family)) + "\n"
               + epsDefine(lastDoubleArg(card)) + cudaPrelude(card.inputs.front().dtype) + templateSource("chunk_stats.cuh")
               + templateSource("long_rows.cu");
    };
    t.launch = [family](const J &p, const OperatorCard &) {
        const int block = p.at("block");
        if (family == "group_norm") {
            const std::string rows = "n * groups", cols = "c / groups * hw", blocks = rows + " * " + p.at("split").dump();
            return J{{"kernels", J::array({{{"name", "kf_long_stats"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                            {"args", {"in:x", "ws:part", "i64:" + rows, "i64:" + cols}}},
                                           {{"name", "kf_long_group_apply"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                            {"args", {"in:x", "ws:part", "in:weight", "in:bias", "out:y", "i64:" + rows, "i64:" + cols, "sym:hw",
                                                      "i64:c / groups", "sym:groups"}}}})},
                     {"workspace", J::array({{{"name", "part"}, {"bytes", blocks + " * 12"}}})}};
        }
        const std::string blocks = "rows * " + p.at("split").dump();
        auto args = cudaNormArgs(family); // x, weight, bias, y, rows, cols
        return J{{"kernels", J::array({{{"name", "kf_long_stats"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {"in:x", "ws:part", "sym:rows", "sym:cols"}}},
                                       {{"name", "kf_long_apply"}, {"grid", {blocks, 1, 1}}, {"block", {block, 1, 1}}, {"shared_bytes", "0"},
                                        {"args", {args[0], "ws:part", args[1], args[2], args[3], args[4], args[5]}}}})},
                 {"workspace", J::array({{{"name", "part"}, {"bytes", blocks + " * 12"}}})}};
    };
    return t;
}

KernelTemplate cpuTemplate(const std::string &family, const std::string &kind, const std::string &description, std::string defines,
                           std::string prologue, std::string kernelFile)
{
    KernelTemplate t;
    t.id = "cpu." + family + "." + kind;
    t.family = family;
    t.backend = "cpu";
    t.description = description;
    // Double first: a float sum of millions of squares (a whole tensor, a channel over n and hw) carries
    // its order's error past the guard's bound (113 units against 44 allowed over 819200 elements).
    t.space = {{"acc", {"double", "float"}}, {"accumulators", {8, 16, 4, 2, 1}}};
    seedPartialResults(t, false);
    t.valid = [](const J &, const OperatorCard &card) { return card.inputs.front().dtype == DType::F32; };
    t.render = [id = t.id, defines, prologue, kernelFile](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + defines + epsDefine(lastDoubleArg(card), false) + templateSource(prologue)
               + templateSource(kernelFile);
    };
    return t;
}

} // namespace

void addSplitNormTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"batch_norm", "batch_norm_affine", "batch_norm_eval"}) {
        lib.add(cudaBatchNorm(f));
        lib.add(cpuTemplate(f, "channels", "per channel: two-pass mean and biased variance over n and hw with partial sums (or the running "
                                           "statistics), then scale and shift",
                            "#define MODE " + std::to_string(batchNormMode(f)) + "\n", "anydim_prologue.h", "cpu_batch_norm.cpp"));
    }
    lib.add(cudaFrobenius());
    lib.add(cpuTemplate("frobenius_norm", "whole", "the sum of squares of every element with partial sums, then x / its square root", "",
                        "cpu_rows.h", "cpu_frobenius.cpp"));
    for (const char *f : {"layer_norm", "rms_norm", "group_norm"})
        lib.add(cudaLongRows(f));
}

} // namespace kforge
