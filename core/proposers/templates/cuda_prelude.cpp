#include "proposers/templates/cuda_prelude.h"

#include "proposers/template_sources.h"

namespace kforge {

int cudaDtypeCode(DType dtype)
{
    return dtype == DType::F16 ? 1 : dtype == DType::BF16 ? 2 : 0;
}

int cudaNormFamilyCode(const std::string &f)
{
    return f == "softmax" ? 0 : f == "log_softmax" ? 1 : f == "layer_norm" ? 2 : f == "rms_norm" || f == "rms_norm_cast" || f == "rms_norm_offset" ? 3 : 4;
}

bool cudaWeightedNorm(const std::string &family)
{
    return family == "layer_norm" || family == "rms_norm" || family == "rms_norm_cast" || family == "rms_norm_offset";
}

bool cudaSoftmaxFamily(const std::string &family)
{
    return family == "softmax" || family == "log_softmax";
}

KernelTemplate cudaNormTemplate(const std::string &family, const std::string &kind, std::string description,
                                std::map<std::string, std::vector<nlohmann::json>> space)
{
    KernelTemplate t;
    t.id = "cuda." + family + "." + kind;
    t.family = family;
    t.backend = "cuda";
    t.description = std::move(description);
    t.space = std::move(space);
    if (cudaSoftmaxFamily(family))
        t.space["fast_exp"] = {1, 0};
    return t;
}

nlohmann::json cudaNormArgs(const std::string &family)
{
    if (family == "group_norm")
        return {"in:x", "in:weight", "in:bias", "out:y", "sym:n", "sym:c", "sym:hw", "sym:groups"};
    const bool norm = cudaWeightedNorm(family);
    return {"in:x", norm ? "in:weight" : "in:x", family == "layer_norm" ? "in:bias" : "in:x", "out:y", "sym:rows", "sym:cols"};
}

nlohmann::json cudaOneKernelPlan(const std::string &name, nlohmann::json grid, nlohmann::json block, nlohmann::json args,
                                 const std::string &sharedBytes, int cluster, nlohmann::json workspace)
{
    nlohmann::json k = {{"name", name},
                        {"grid", std::move(grid)},
                        {"block", {std::move(block), 1, 1}},
                        {"shared_bytes", sharedBytes},
                        {"args", std::move(args)}};
    if (cluster > 1)
        k["cluster"] = {cluster, 1, 1};
    return {{"kernels", nlohmann::json::array({std::move(k)})}, {"workspace", std::move(workspace)}};
}

int cudaRereads(int64_t segmentBytes, int64_t inFlight)
{
    return segmentBytes * inFlight > kCudaL2Bytes ? 2 : 1;
}

int64_t cudaChunkElems(int64_t len, int parts, int vec)
{
    return ((len + parts - 1) / parts + vec - 1) / vec * vec;
}

int64_t cudaChunkBytes(int64_t len, int parts, int vec, int elem)
{
    return cudaChunkElems(len, parts, vec) * elem;
}

std::string cudaChunkSmemExpr(const std::string &len, int parts, int vec, int elem)
{
    return "min(ceil_div(ceil_div(" + len + ", " + std::to_string(parts) + "), " + std::to_string(vec) + ") * " + std::to_string(vec * elem)
           + ", " + std::to_string(kCudaChunkSmemCap) + ")";
}

int cudaVecFor(const OperatorCard &card)
{
    return 16 / dtypeSize(card.inputs.front().dtype);
}

void cudaRowSeed(int64_t cols, int vec, int maxReg, int &tpr, int &reg)
{
    tpr = 1024;
    reg = 0;
    for (int t : {32, 64, 128, 256, 512, 1024})
        if (int64_t(t) * maxReg >= cols) {
            tpr = t;
            break;
        }
    for (int r : {4, 8, 16, 32})
        if (r % vec == 0 && int64_t(tpr) * r >= cols) {
            reg = r;
            break;
        }
}

std::string cudaPrelude(DType dtype)
{
    std::string s = "#define KF_DTYPE " + std::to_string(cudaDtypeCode(dtype)) + " // 0 float32, 1 float16, 2 bfloat16\n";
    s += templateSource("prelude.cuh");
    return s;
}

const std::string &cudaPackHelpers()
{
    return templateSource("pack_helpers.cuh");
}

const std::string &cudaBlockHelpers()
{
    return templateSource("block_helpers.cuh");
}

} // namespace kforge
