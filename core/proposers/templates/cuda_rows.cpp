// CUDA templates for row-wise normalizations: softmax, log-softmax, layer norm and RMS norm over the
// last dimension, in float32, float16 and bfloat16; also rms_norm_cast, RMS norm as models write it out,
// whose normalized value is rounded to the storage type before the weight multiplies it (CAST_NORMED), and
// rms_norm_offset, Gemma's, which multiplies by one plus the weight in float32 (WEIGHT_OFFSET).
//
// `cuda.<family>.rows`: a group of TPR threads per row (a warp, or several warps with a shared-memory
// combine), RPB rows per block, VEC-element (up to 16-byte) loads when the row length and pointers
// allow, and the row kept in REG registers per thread when it fits, so it is read from memory once.
// Rows that do not fit stream through twice; the second read mostly hits L2. HINT 1 marks the reads as
// torch.compile's kernels do: evict-last for the statistics pass and the weights, evict-first for the
// final re-read.
//
// `cuda.<softmax|log_softmax>.split`: rows of hundreds of thousands of elements are cut into chunks
// across blocks: one kernel writes each chunk's (max, sum) to a workspace, a second combines a row's
// chunks and writes the output.
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

// Rows shorter than this many elements take several rows per warp (TPR below 32).
constexpr int64_t kShortRow = 64;

KernelTemplate rowsTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(
        family, "rows", "TPR threads per row, RPB rows per block, VEC-wide loads, row cached in REG registers per thread when it fits",
        {{"tpr", {4, 8, 16, 32, 64, 128, 256, 512, 1024}}, {"rpb", {1, 2, 4, 8, 16, 32, 64}}, {"vec", {1, 2, 4, 8}}, {"reg", {0, 4, 8, 16, 32}},
         {"occ", {0, 1024, 1536, 2048}}, {"hint", {0, 1}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const int tpr = p.at("tpr"), rpb = p.at("rpb"), vec = p.at("vec"), reg = p.at("reg");
        const int elem = dtypeSize(card.inputs.front().dtype);
        const auto cols = card.shape.count("cols") ? card.shape.at("cols") : 0;
        if (tpr * rpb > 1024 || vec * elem > 16 || (reg > 0 && reg % vec != 0))
            return false;
        // Several rows per warp only for rows of fewer than kShortRow elements, in blocks of whole warps;
        // more than 8 rows per block only for them.
        if (tpr < 32 && cols >= kShortRow)
            return false;
        if ((tpr * rpb) % 32 != 0 || (rpb > 8 && tpr >= 32))
            return false;
        // A register cache that cannot hold the captured row only duplicates the streaming variant,
        // and one four times too large only wastes registers.
        if (reg > 0 && (int64_t(tpr) * reg < cols || int64_t(tpr) * reg >= 4 * std::max<int64_t>(cols, tpr * vec)))
            return false;
        return true;
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".rows\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family)));
        s += defineLine("TPR", p.at("tpr").dump()) + defineLine("RPB", p.at("rpb").dump()) + defineLine("VEC", p.at("vec").dump());
        s += defineLine("REG", p.at("reg").dump()) + defineLine("FAST_EXP", std::to_string(p.value("fast_exp", 1)));
        s += defineLine("OCC", std::to_string(p.value("occ", 0))) + defineLine("HINT", std::to_string(p.value("hint", 0)));
        s += epsDefine(referenceEps(card));
        s += defineLine("CAST_NORMED", family == "rms_norm_cast" ? "1" : "0");
        if (family == "rms_norm_offset")
            s += defineLine("WEIGHT_OFFSET", "1");
        return s + cudaPrelude(card.inputs.front().dtype) + templateSource("row_packs.cuh") + templateSource("rows.cu");
    };
    t.seed = [family](const OperatorCard &card) {
        const int vec = cudaVecFor(card);
        int tpr = 0, reg = 0;
        // Norms hold 64 bytes per thread (16 float32 values, 32 of 16 bits), softmax 32 values: on the
        // H200 a 4096-wide float32 layer norm ran 1.3% faster with 256 threads of 16 than with 128 of
        // 32, while softmax was at the roofline. At 16 values, 16-bit norms ran far below it: bf16 RMS
        // norm 4096 x 8192 in 40.7 us against 32.4 us with 32 values (256 threads), 2048 x 16384 in
        // 49.8 against 33.6, layer norm 16384 x 8192 in 183.1 against 134.4; at 2048 and 4096 wide
        // both ran within 1% of each other.
        const bool norm = cudaWeightedNorm(family);
        const int normValues = 64 / dtypeSize(card.inputs.front().dtype);
        const int64_t cols = card.shape.at("cols");
        if (cols < kShortRow) {
            // Many short rows: the fewest lanes (from 4) holding the row in two packs each, 256 threads a block.
            tpr = 4;
            while (tpr < 16 && int64_t(tpr) * vec * 2 < cols)
                tpr *= 2;
            for (int r : {4, 8, 16, 32})
                if (r % vec == 0 && int64_t(tpr) * r >= cols) {
                    reg = r;
                    break;
                }
            J p = {{"tpr", tpr}, {"rpb", 256 / tpr}, {"vec", vec}, {"reg", reg}, {"occ", 0}, {"hint", norm ? 1 : 0}};
            if (cudaSoftmaxFamily(family))
                p["fast_exp"] = 1;
            return p;
        }
        cudaRowSeed(cols, vec, norm ? normValues : 32, tpr, reg);
        // Norms read with torch.compile's cache hints (HINT 1): a 4096-wide float32 layer norm ran in
        // 126.0 us with them and 130.8 us without, RMS norm 125.3 against 130.2 (H200, one timer).
        J p = {{"tpr", tpr}, {"rpb", std::max(1, 128 / tpr)}, {"vec", vec}, {"reg", reg}, {"occ", 0}, {"hint", norm ? 1 : 0}};
        if (cudaSoftmaxFamily(family))
            p["fast_exp"] = 1;
        return p;
    };
    t.reads = [](const J &p, const OperatorCard &card) {
        // A register cache holds the row (valid sees to that); else the row streams twice, with as many
        // rows in flight as the device holds groups of TPR threads.
        if (p.at("reg").get<int>() > 0)
            return 1;
        const int64_t rows = card.shape.at("rows"), cols = card.shape.at("cols");
        return cudaRereads(cols * dtypeSize(card.inputs.front().dtype), std::min(rows, kCudaResidentThreads / p.at("tpr").get<int>()));
    };
    t.launch = [family](const J &p, const OperatorCard &) {
        const int tpr = p.at("tpr"), rpb = p.at("rpb");
        return cudaOneKernelPlan("kf_rows", {"ceil_div(rows, " + std::to_string(rpb) + ")", 1, 1}, tpr * rpb, cudaNormArgs(family));
    };
    return t;
}

KernelTemplate splitTemplate(const std::string &family)
{
    KernelTemplate t = cudaNormTemplate(family, "split",
                                        "a row split into CHUNK-element chunks across blocks; chunk statistics in a workspace, "
                                        "combined by a second kernel",
                                        {{"chunk", {2048, 4096, 8192, 16384, 32768}}, {"block", {128, 256, 512, 1024}}});
    t.valid = [](const J &p, const OperatorCard &card) {
        const auto cols = card.shape.count("cols") ? card.shape.at("cols") : 0;
        // Splitting only pays when a row alone can fill several blocks.
        return cols >= 2 * p.at("chunk").get<int64_t>();
    };
    t.render = [family](const J &p, const OperatorCard &card) {
        std::string s = "// template cuda." + family + ".split\n";
        s += defineLine("FAMILY", std::to_string(cudaNormFamilyCode(family))) + defineLine("CHUNK", p.at("chunk").dump());
        s += defineLine("BLOCK", p.at("block").dump()) + defineLine("FAST_EXP", p.at("fast_exp").dump());
        return s + cudaPrelude(card.inputs.front().dtype) + cudaBlockHelpers() + templateSource("rows_split.cu");
    };
    t.seed = [](const OperatorCard &) { return J{{"chunk", 8192}, {"block", 512}, {"fast_exp", 1}}; };
    t.reads = [](const J &, const OperatorCard &card) {
        // The statistics kernel reads every row before the second kernel reads them again.
        return cudaRereads(card.shape.at("cols") * dtypeSize(card.inputs.front().dtype), card.shape.at("rows"));
    };
    t.launch = [](const J &p, const OperatorCard &) {
        const std::string chunks = "ceil_div(cols, " + p.at("chunk").dump() + ")";
        const int block = p.at("block");
        return J{{"kernels", J::array({{{"name", "kf_split_stats"}, {"grid", {chunks, "rows", 1}}, {"block", {block, 1, 1}},
                                        {"shared_bytes", "0"}, {"args", {"in:x", "ws:stats", "sym:cols"}}},
                                       {{"name", "kf_split_write"}, {"grid", {chunks, "rows", 1}}, {"block", {block, 1, 1}},
                                        {"shared_bytes", "0"}, {"args", {"in:x", "ws:stats", "out:y", "sym:cols"}}}})},
                 {"workspace", J::array({{{"name", "stats"}, {"bytes", "rows * " + chunks + " * 8"}}})}};
    };
    return t;
}

} // namespace

void addCudaRowTemplates(TemplateLibrary &lib)
{
    for (const char *f : {"softmax", "log_softmax", "layer_norm", "rms_norm", "rms_norm_cast", "rms_norm_offset"})
        lib.add(rowsTemplate(f));
    for (const char *f : {"softmax", "log_softmax"})
        lib.add(splitTemplate(f));
}

} // namespace kforge
