#pragma once
// A model's float64 copy, for the references that judge outputs. A trace holds the dtypes it saw as
// constants (`.to(q.dtype)` as bfloat16, `softmax(w, dtype=torch.float32)`, `torch.full(..., dtype=...)`),
// so converting its parameters to float64 is not enough: those casts would bring float32 or bfloat16 back
// among float64 tensors. Each floating dtype constant an operator takes as its `dtype` argument is made
// float64 as well, so the copy computes the model's arithmetic in float64 throughout.
#include <torch/script.h>

namespace kforge::worker {

// In place, over every method of the module and its submodules; integer and bool dtypes stay. Returns how
// many dtype arguments it changed.
int retargetFloatingDtypes(torch::jit::Module &module, at::ScalarType to);

} // namespace kforge::worker
