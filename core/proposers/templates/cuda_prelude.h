#pragma once
// Device-side helpers shared by the CUDA templates, as source text prepended to each candidate: the
// storage type T for the card's dtype with float conversions (inline PTX, so no CUDA headers are
// needed under NVRTC), 16-byte vector packs, and warp and row-group reductions.
#include <string>

#include "ops/operator_card.h"

namespace kforge {

// KF_DTYPE is 0 (float32), 1 (float16) or 2 (bfloat16).
std::string cudaPrelude(DType dtype);
int cudaDtypeCode(DType dtype);

} // namespace kforge
