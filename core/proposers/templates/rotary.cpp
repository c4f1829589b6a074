// Templates for the fused rotary embedding (runtime/fused_ops.h): x [b, s, h, d] in, y [b, h, s, d] out,
// cos and sin [s, d] (rotary_embedding) or [b, 1, s, d] (rotary_embedding_batched). The head size is the
// card's: HALF = d / 2 is compiled in, so the pairing of a row's halves costs no index arithmetic.
#include "proposers/template_library.h"
#include "proposers/template_sources.h"
#include "proposers/templates/cuda_prelude.h"

namespace kforge {

namespace {

using J = nlohmann::json;

int64_t halfOf(const OperatorCard &card) { return card.shape.at("d") / 2; }

// HALF, and TABLE_BATCH: 1 where the tables are [b, 1, s, d] (one per sequence), 0 for [s, d].
std::string rotaryDefines(const OperatorCard &card)
{
    return defineLine("HALF", halfOf(card)) + defineLine("TABLE_BATCH", card.inputs.at(1).dims.size() == 4 ? 1 : 0);
}

KernelTemplate cudaTemplate(const std::string &family)
{
    const std::string id = "cuda." + family + ".rows";
    KernelTemplate t;
    t.id = id;
    t.family = family;
    t.backend = "cuda";
    t.description = "a thread per VEC-element pack of a row's first half and the pack it pairs with: x read once in memory order, "
                    "y written once to the transposed row, cos and sin from cache";
    t.space = {{"block", {64, 128, 256, 512, 1024}}, {"vec", {1, 2, 4, 8}}};
    t.valid = [](const J &p, const OperatorCard &card) {
        const int vec = p.at("vec");
        return vec * dtypeSize(card.inputs.front().dtype) <= 16 && halfOf(card) % vec == 0;
    };
    t.render = [id](const J &p, const OperatorCard &card) {
        return paramDefines(id, p) + cudaPrelude(card.inputs.front().dtype) + rotaryDefines(card) + templateSource("rotary.cu");
    };
    t.launch = [](const J &p, const OperatorCard &card) {
        const int block = p.at("block"), vec = p.at("vec");
        const std::string threads = "b * s * h * " + std::to_string(halfOf(card) / vec);
        return cudaOneKernelPlan("kf_rotary", {"ceil_div(" + threads + ", " + std::to_string(block) + ")", 1, 1}, block,
                                 {"in:x", "in:cos", "in:sin", "out:y", "sym:b", "sym:s", "sym:h"});
    };
    t.seed = [](const OperatorCard &card) {
        int vec = cudaVecFor(card);
        while (vec > 1 && halfOf(card) % vec != 0)
            vec /= 2;
        return J{{"block", 256}, {"vec", vec}};
    };
    return t;
}

} // namespace

void addRotaryTemplates(TemplateLibrary &lib)
{
    for (const char *family : {"rotary_embedding", "rotary_embedding_batched"}) {
        lib.add(cpuUnrolledRowsTemplate(family,
                                        "per row of x: UNROLL pairs (j, j + d/2) rotated by cos and sin, written to the transposed row of y",
                                        rotaryDefines, "cpu_rotary.cpp"));
        lib.add(cudaTemplate(family));
    }
}

} // namespace kforge
