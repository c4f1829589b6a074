#pragma once
// Chains of ATen calls inside a model that one kernel can do in one pass, found among a profiled
// workload's top-level calls, each becoming one card of a fused operator (runtime/fused_ops.h) whose time
// in the model is the whole chain's:
//   - attention's softmax as models write it in eager PyTorch,
//       s = scores * scale [+ mask]; p = torch.softmax(s.float(), -1).to(scores.dtype)
//     (aten::mul.Scalar, aten::add.Tensor, aten::to.dtype float32, aten::softmax.int over the last dim,
//     aten::to.dtype back): a scaled_softmax or scaled_masked_softmax card;
//   - the gated MLP's SiLU gate, silu(a) * b with a and b of one shape and dtype (aten::silu, then the
//     aten::mul.Tensor taking its output a few calls later, after the up projection): a silu_mul card;
//   - RMSNorm written out, `xf = x.float(); w * (xf * rsqrt(xf.pow(2).mean(-1, True) + eps)).to(x.dtype)`
//     (eight adjacent calls, eps a constant, the weight of the last dimension): an rms_norm_cast card;
//   - a sublayer's residual add right before that RMSNorm, `h = x + r` (aten::add.Tensor of two tensors of
//     one shape and dtype, then the eight calls on h): an add_rms_norm_cast card, h and the norm both outputs;
//   - GELU's tanh form written out as Hugging Face's NewGELUActivation writes it (eight calls with its exact
//     numbers), alone (gelu_new) or times a tensor of its shape (gelu_new_mul, T5 v1.1's gate), and CLIP's
//     QuickGELU, x * sigmoid(1.702 * x) (quick_gelu);
//   - Gemma's RMSNorm, (xf * rsqrt(...) * (1.0 + w.float())).type_as(x) (rms_norm_offset; over a
//     transposed per-head view too) and after a residual add (add_rms_norm_offset);
//   - the rotary embedding, `q * cos + cat([-q[..., d/2:], q[..., :d/2]], -1) * sin` with q a projection's
//     [b, s, h, d] view transposed to [b, h, s, d] (seven adjacent calls): a rotary_embedding card.
// The calls are matched by order, shape and dtype (the profile records no tensor identity); the card's
// reference is the chain itself, so the guard checks any kernel against what the model computes, and the
// pack's rewrite (runtime::rewriteFusedPatterns) matches the chain in the model's graph by data flow.
#include <vector>

#include "ops/operator_card.h"
#include "workload/workload_file.h"

namespace kforge {

// One card per distinct chain (family, shape, dtype, the model's constants), keys continuing from `keyIndex`.
std::vector<OperatorCard> fusedPatternCards(const std::vector<CapturedCall> &calls, int keyIndex);

} // namespace kforge
