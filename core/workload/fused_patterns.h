#pragma once
// Chains of ATen calls inside a model that one kernel can do in one pass, found among a profiled
// workload's top-level calls. Today: attention's softmax chain as models write it in eager PyTorch,
//   s = scores * scale [+ mask]; p = torch.softmax(s.float(), -1).to(scores.dtype)
// (aten::mul.Scalar, aten::add.Tensor, aten::to.dtype float32, aten::softmax.int over the last dim,
// aten::to.dtype back), which becomes one scaled_softmax or scaled_masked_softmax card
// (runtime/fused_ops.h) whose time in the model is the whole chain's. The calls are matched by order,
// shape and dtype (the profile records no tensor identity); the card's reference is the chain itself,
// so the guard checks any kernel against what the model computes, and the pack's rewrite
// (runtime::rewriteFusedPatterns) matches the chain in the model's graph by data flow.
#include <vector>

#include "ops/operator_card.h"
#include "workload/workload_file.h"

namespace kforge {

// One card per distinct chain (shape, dtype, scale, mask shape), keys continuing from `keyIndex`.
std::vector<OperatorCard> fusedPatternCards(const std::vector<CapturedCall> &calls, int keyIndex);

} // namespace kforge
