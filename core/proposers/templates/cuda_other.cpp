// CUDA templates for group norm, last-dimension reductions and cross-entropy (the scans: scan.cpp), in float32, float16 and bfloat16 where the card asks.
#include <string>

#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

bool vecFits(const J &p, const OperatorCard &card)
{
    return p.value("vec", 1) * dtypeSize(card.inputs.front().dtype) <= 16;
}

KernelTemplate make(const std::string &family, const std::string &name, const std::string &description,
                    std::function<J(const OperatorCard &)> seed, std::map<std::string, std::vector<J>> space,
                    std::function<bool(const J &, const OperatorCard &)> valid,
                    std::function<std::string(const J &, const OperatorCard &)> extra, const std::string &bodyFile,
                    std::function<J(const J &, const OperatorCard &)> launch)
{
    const std::string id = "cuda." + family + "." + name;
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = description;
    t.space = std::move(space);
    t.valid = [valid](const J &p, const OperatorCard &card) { return vecFits(p, card) && (!valid || valid(p, card)); };
    t.render = [id, extra, bodyFile](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + (extra ? extra(p, card) : std::string()) + templateSource(bodyFile);
    };
    t.launch = std::move(launch);
    t.seed = std::move(seed);
    return t;
}

} // namespace

void addCudaOtherTemplates(TemplateLibrary &lib)
{
    lib.add(make("group_norm", "groups", "a block per (sample, group), two passes with the group re-read from L2, optional persistent grid",
                 [](const OperatorCard &card) { return J{{"block", 1024}, {"vec", cudaVecFor(card)}, {"grid_blocks", 264}}; },
                 {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}, {"grid_blocks", {0, 132, 264, 528}}}, nullptr,
                 [](const J &, const OperatorCard &card) {
                     return templateSource("block_sum2.cuh") + epsDefine(referenceEps(card));
                 },
                 "group_norm.cu", [](const J &p, const OperatorCard &) {
                     const int gb = p.at("grid_blocks");
                     J grid = {gb == 0 ? std::string("n * groups") : "min(n * groups, " + std::to_string(gb) + ")", 1, 1};
                     return cudaOneKernelPlan("kf_group_norm", grid, p.at("block"), cudaNormArgs("group_norm"));
                 }));

    const std::vector<std::pair<std::string, int>> reductions = {{"sum", 0}, {"mean", 1}, {"max", 2}, {"argmax", 3}};
    for (const auto &[family, op] : reductions) {
        const int code = op;
        lib.add(make(family, "rows", "TPR threads per row, RPB rows per block, VEC-element loads, shuffle then shared-memory combine",
                     [code](const OperatorCard &card) {
                         // A warp per short row; else a block of 256 per row, but for max and argmax a warp
                         // per row, eight a block, where the rows still fill the device: their combine
                         // across warps (a value, or a value and its index) costs more than a sum's. On the
                         // H200 the warp was best for max and argmax over 4096 x 4096 and 8192 x 2048
                         // (0.86-0.88 and 0.67-0.70 of it with 256), and 256 over 1024 x 16384 rows
                         // (128 blocks of eight), as for sum and mean at all three.
                         const int64_t rows = card.shape.at("rows"), cols = card.shape.at("cols");
                         const bool extreme = code == 2 || code == 3;
                         const int tpr = cols <= 1024 || (extreme && rows / 8 >= kCudaFillBlocks) ? 32 : 256;
                         return J{{"tpr", tpr}, {"rpb", std::max(1, 256 / tpr)}, {"vec", cudaVecFor(card)}};
                     },
                     {{"tpr", {32, 64, 128, 256, 512, 1024}}, {"rpb", {1, 2, 4, 8}}, {"vec", {1, 2, 4, 8}}},
                     [](const J &p, const OperatorCard &) { return p.at("tpr").get<int>() * p.at("rpb").get<int>() <= 1024; },
                     [code](const J &, const OperatorCard &) {
                         return "#define OP " + std::to_string(code) + "\n#define OUT_T " + (code == 3 ? "long long" : "T") + "\n";
                     },
                     "reduce_rows.cu", [](const J &p, const OperatorCard &) {
                         const int tpr = p.at("tpr"), rpb = p.at("rpb");
                         return cudaOneKernelPlan("kf_reduce", {"ceil_div(rows, " + std::to_string(rpb) + ")", 1, 1}, tpr * rpb,
                                     {"in:x", "out:y", "sym:rows", "sym:cols"});
                     }));
    }

    lib.add(make("cross_entropy", "two_pass", "a block per row for log-sum-exp minus the target logit, then one block for the mean",
                 [](const OperatorCard &card) {
                     // 256 threads where the rows fill the device's thread slots with them: on the H200,
                     // Llama 3's loss (4096 x 128256 bf16) ran 314.7 us with 256 threads and 506.3 with
                     // 1024, GPT-2's (8192 x 50257 float32) 385.7 against 490.7: more blocks a
                     // multiprocessor keep more loads in flight. With fewer rows, 512 while there is still
                     // a row for every multiprocessor (256 rows of 32000 float32: 15.4 us, against 16.7
                     // with 256 threads and 17.2 with 1024), and 1024 below that (64 rows of 128256: 22.0
                     // us against 38.8 with 256 threads), where a multiprocessor gets one block at most.
                     const int64_t rows = card.shape.at("rows");
                     const int block = rows * 256 >= kCudaResidentThreads ? 256 : rows >= kCudaFillBlocks / 2 ? 512 : 1024;
                     return J{{"block", block}, {"vec", cudaVecFor(card)}};
                 },
                 {{"block", {256, 512, 1024}}, {"vec", {1, 2, 4, 8}}}, nullptr,
                 [](const J &, const OperatorCard &) { return cudaBlockHelpers() + templateSource("row_packs.cuh"); }, "cross_entropy.cu",
                 [](const J &p, const OperatorCard &) {
                     return J{{"kernels", J::array({{{"name", "kf_ce_rows"}, {"grid", {"rows", 1, 1}}, {"block", {p.at("block"), 1, 1}},
                                                     {"shared_bytes", "0"}, {"args", {"in:logits", "in:target", "ws:loss", "sym:vocab"}}},
                                                    {{"name", "kf_ce_mean"}, {"grid", {1, 1, 1}}, {"block", {1024, 1, 1}},
                                                     {"shared_bytes", "0"}, {"args", {"ws:loss", "in:target", "out:loss", "sym:rows"}}}})},
                              {"workspace", J::array({{{"name", "loss"}, {"bytes", "rows * 4"}}})}};
                 }));
}

} // namespace kforge
