#pragma once
// Device-side helpers shared by the CUDA templates, as source text prepended to each candidate: the
// storage type T for the card's dtype with float conversions (inline PTX, so no CUDA headers are
// needed under NVRTC), 16-byte vector packs, and warp and row-group reductions.
#include <string>

#include "ops/operator_card.h"
#include "proposers/template_library.h"

namespace kforge {

// KF_DTYPE is 0 (float32), 1 (float16) or 2 (bfloat16).
std::string cudaPrelude(DType dtype);
// Block-wide helpers for kernels that define BLOCK (threads per block): block reductions, shared-memory
// addresses, and the sm_90 bulk copy into shared memory with its mbarrier. Appended after the prelude.
const std::string &cudaBlockHelpers();
// VEC-element packs as raw bits (Raw, Packed) and load_pack: for staging rows in shared memory unconverted.
const std::string &cudaPackHelpers();
int cudaDtypeCode(DType dtype);
// Elements per 16-byte load for the card's first input.
int cudaVecFor(const OperatorCard &card);
// Threads per row and register-cache size an expert would start from for a row of `cols` elements:
// the fewest threads per row (from 32) that hold the row in at most maxReg registers each.
void cudaRowSeed(int64_t cols, int vec, int maxReg, int &tpr, int &reg);

// The FAMILY code the normalization kernels switch on: softmax 0, log-softmax 1, layer norm 2, RMS norm
// 3 (also rms_norm_cast, the written-out chain, with CAST_NORMED), group norm 4.
int cudaNormFamilyCode(const std::string &family);
// The row norms with a weight: layer norm, RMS norm and rms_norm_cast.
bool cudaWeightedNorm(const std::string &family);
// Softmax and log-softmax: the families whose kernels take the FAST_EXP knob.
bool cudaSoftmaxFamily(const std::string &family);
// A row-wise family's CUDA template "cuda.<family>.<kind>" with its description and tuning space; the
// softmax families also get fast_exp. The caller adds valid, render, seed and launch.
KernelTemplate cudaNormTemplate(const std::string &family, const std::string &kind, std::string description,
                                std::map<std::string, std::vector<nlohmann::json>> space);

// The device the seeds size their grids for: an H200's 132 SMs, 2048 resident threads each. Below
// kCudaFillBlocks blocks a grid leaves SMs idle or single-block; below kCudaResidentThreads threads
// the first wave leaves thread slots empty.
constexpr int64_t kCudaFillBlocks = 2 * 132;
constexpr int64_t kCudaResidentThreads = 132 * 2048;

// The share of the device's L2 (an H200's 60 MiB) that rows streamed twice can count on finding again.
constexpr int64_t kCudaL2Bytes = int64_t(48) << 20;
// Reads from memory of a kernel that streams each segment of segmentBytes twice with inFlight segments
// in flight between a segment's two passes: once where they all fit in L2, else twice.
int cudaRereads(int64_t segmentBytes, int64_t inFlight);

// Shared memory a block may give its chunk of a row: the device's opt-in limit (sm_90) less room for
// static reduction buffers.
constexpr int64_t kCudaChunkSmemCap = 232448 - 1024;
// Elements of one of `parts` chunks of a len-element segment, rounded up to whole VEC-element packs,
// and the same in bytes.
int64_t cudaChunkElems(int64_t len, int parts, int vec);
int64_t cudaChunkBytes(int64_t len, int parts, int vec, int elem);
// The same as a launch-plan expression over the segment length `len` (e.g. "cols"), capped at kCudaChunkSmemCap.
std::string cudaChunkSmemExpr(const std::string &len, int parts, int vec, int elem);
// A normalization kernel's arguments: x, weight, bias, y, then rows, cols (group norm: n, c, hw, groups);
// x stands in for a weight or bias the family does not have.
nlohmann::json cudaNormArgs(const std::string &family);
// A launch plan of one kernel with a 1-D block, optionally in clusters of `cluster` blocks along x.
nlohmann::json cudaOneKernelPlan(const std::string &name, nlohmann::json grid, nlohmann::json block, nlohmann::json args,
                                 const std::string &sharedBytes = "0", int cluster = 1,
                                 nlohmann::json workspace = nlohmann::json::array());

} // namespace kforge
