#pragma once
// Fused patterns: chains of ATen calls that a model makes one after another and one kernel can do in a
// single pass over memory. Each is an operator of the kforge namespace whose own implementation is the
// chain itself, in the model's order and dtypes, so a program rewritten to call it computes what it
// computed before; a pack's kernel for it stands in front of that implementation behind its guard.
//
//   kforge::scaled_softmax(Tensor x, float scale) -> Tensor
//       softmax((x * scale).float(), -1).to(x.dtype)           (attention without a mask)
//   kforge::scaled_masked_softmax(Tensor x, float scale, Tensor mask) -> Tensor
//       softmax((x * scale + mask).float(), -1).to(x.dtype)    (mask broadcast over x's leading dims)
//       Both also stand for softmax(x * scale [+ mask], -1, dtype=torch.float32).to(x.dtype) (Llama's eager
//       attention: the softmax converts its input first).
//   kforge::scaled_softmax_to(Tensor x, float scale, Tensor? mask, ScalarType dtype, bool tensor_scale) -> Tensor
//       softmax((x * scale [+ mask]).float(), -1).to(dtype), the scale a number or (tensor_scale) a 0-dim
//       float64 tensor: the chains with casts whose cast back is a constant dtype, as a trace holds
//       `.to(q.dtype)`; where x is floating and dtype is x's when it runs, kforge::scaled_[masked_]softmax(x,
//       scale[, mask]) through the dispatcher (a floating x times either scale is the same product), else
//       the chain as written
//   kforge::scaled_softmax_native(Tensor x, float scale) -> Tensor
//   kforge::scaled_masked_softmax_native(Tensor x, float scale, Tensor mask) -> Tensor
//       softmax(x * scale [+ mask], -1), in x's own dtype      (a model that computes in one dtype, as most
//                                                               float32 models do)
//   kforge::scaled_softmax_native_traced(Tensor x, float scale) -> Tensor
//   kforge::scaled_masked_softmax_native_traced(Tensor x, float scale, Tensor mask) -> Tensor
//       the same with the scale a 0-dim float64 tensor, as a traced model keeps `* 0.125`
//   kforge::scaled_softmax_native_div[_traced](Tensor x, float divisor) -> Tensor
//   kforge::scaled_masked_softmax_native_div[_traced](Tensor x, float divisor, Tensor mask) -> Tensor
//       softmax(x / divisor [+ mask], -1), in x's own dtype (BERT's `/ math.sqrt(head_size)`), the divisor
//       a number or (traced) a 0-dim float64 tensor
//   kforge::masked_softmax_native_view(Tensor x, Tensor mask, int[] size) -> Tensor
//       softmax((x + mask).view(size), -1), no scale (BART, OPT, Whisper, CLIP scale q before the product and
//       view the scores back to [b * h, q, k] between the mask and the softmax): where the view keeps the
//       last dimension, kforge::scaled_masked_softmax_native(x, 1.0, mask) viewed (the same rows, so the
//       same values), through the dispatcher so a pack's kernel for it takes the call; else the chain
//   kforge::silu_mul(Tensor gate, Tensor up) -> Tensor
//       silu(gate) * up                                         (the gated MLP's SiLU gate)
//   kforge::gelu_tanh_mul(Tensor gate, Tensor up) -> Tensor
//   kforge::gelu_mul(Tensor gate, Tensor up) -> Tensor
//       gelu(gate, approximate='tanh') * up, gelu(gate) * up    (the GELU gates: Gemma's, GeGLU's)
//   kforge::gelu_new(Tensor x) -> Tensor
//   kforge::gelu_new_mul(Tensor gate, Tensor up) -> Tensor
//       0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0)))) [* up]   (GELU's tanh form written
//       out, Hugging Face's "gelu_new": GPT-2, GPT-J, CodeGen; T5 v1.1's gate; eight calls in x's dtype)
//   kforge::quick_gelu(Tensor x) -> Tensor
//       x * sigmoid(1.702 * x)                                  (Hugging Face's "quick_gelu": CLIP)
//   kforge::rms_norm_cast(Tensor x, Tensor weight, float eps) -> Tensor
//       xf = x.float(); weight * (xf * rsqrt(xf.pow(2).mean(-1, True) + eps)).to(x.dtype)   (RMSNorm written out)
//   kforge::add_rms_norm_cast(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)
//       h = x + residual; (h, rms_norm_cast(h, weight, eps))   (a sublayer's residual add and the norm after it)
//   kforge::rms_norm_offset(Tensor x, Tensor weight, float eps) -> Tensor
//       xf = x.float(); (xf * rsqrt(xf.pow(2).mean(-1, True) + eps) * (1.0 + weight.float())).type_as(x)
//       (Gemma's RMSNorm, and the models written after it: the weight an offset from one, the product
//       in float32 and rounded once)
//   kforge::add_rms_norm_offset(Tensor x, Tensor residual, Tensor weight, float eps) -> (Tensor, Tensor)
//       h = x + residual; (h, rms_norm_offset(h, weight, eps))
//   kforge::rms_norm_offset_heads(Tensor x, Tensor weight, float eps) -> Tensor
//       the same over a transpose's output (Gemma 3's q and k per head on the transposed projection view):
//       kforge::rms_norm_offset through the dispatcher on x.transpose(1, 2), viewed back, where x has four
//       dims and that transpose is contiguous (the same rows, so the same values); on x otherwise
//   kforge::rms_norm_offset_to(Tensor x, Tensor weight, float eps, ScalarType dtype) -> Tensor
//   kforge::add_rms_norm_offset_to(Tensor x, Tensor residual, Tensor weight, float eps, ScalarType dtype) -> (Tensor, Tensor)
//       the same cast to `dtype` (a float32 trace's type_as of the upcast): the operators above where
//       dtype is x's (the sum's; the norm alone as rms_norm_offset_heads does), else the chain
//   kforge::rms_norm_cast_to(Tensor x, Tensor weight, float eps, ScalarType dtype) -> Tensor
//   kforge::add_rms_norm_cast_to(Tensor x, Tensor residual, Tensor weight, float eps, ScalarType dtype) -> (Tensor, Tensor)
//       the same with the cast back to `dtype`, a constant (Hugging Face's LlamaRMSNorm traced:
//       `.to(input_dtype)`): the operators above through the dispatcher where dtype is x's (the sum's) when
//       they run, else the chain
//   kforge::rotary_embedding(Tensor x, Tensor cos, Tensor sin, int half) -> Tensor
//       q = x.transpose(1, 2); q * cos + cat([-q[..., half:], q[..., :half]], -1) * sin
//       (the rotary embedding of a projection viewed as [b, s, h, d], with Llama's rotate_half; the
//       result is [b, h, s, d])
//   kforge::rotary_embedding_sliced(Tensor x, Tensor cos, Tensor sin, int dim, int half, int back_dim, int back) -> Tensor
//       q = x.transpose(1, 2); q * cos + cat([-q.slice(back_dim, back), q.slice(dim, 0, half)], -1) * sin
//       (a trace of Hugging Face's rotate_half: each half computed apart, the slices over dim 3): where both
//       dims are q's last and the halves equal, kforge::rotary_embedding(x, cos, sin, half) through the
//       dispatcher, else the chain
//   kforge::rotary_embedding_heads(Tensor q, Tensor cos, Tensor sin, int dim, int half, int back_dim, int back) -> Tensor
//       q * cos + cat([-q.slice(back_dim, back), q.slice(dim, 0, half)], -1) * sin with q any [b, h, s, d]
//       tensor (Gemma 3 normalizes q per head on the transposed view before its rotary embedding):
//       kforge::rotary_embedding_sliced(q.transpose(1, 2), ...) where q has four dims, so a pack's kernel
//       takes the call where that transpose is contiguous; else the chain
//
// rewriteFusedPatterns finds the chains in a TorchScript module's graphs and replaces each by its
// operator (TorchScript's SubgraphRewriter); an eager Python model would need the same done by an FX pass.
#include <string>
#include <tuple>

#include <ATen/ATen.h>
#include <torch/script.h>

namespace kforge::runtime {

// `compute` is the type of the upcast: float32 as the models write it, float64 for the guard's reference.
at::Tensor scaledSoftmaxChain(const at::Tensor &x, double scale, at::ScalarType compute = at::kFloat);
at::Tensor scaledMaskedSoftmaxChain(const at::Tensor &x, double scale, const at::Tensor &mask, at::ScalarType compute = at::kFloat);
// How the native chains meet their scale: x * scale, or x / scale.
enum class ScaleBy { Multiply, Divide };
// softmax(x * scale [+ mask], -1) as written (x / scale with Divide): the product's dtype is what promotion
// makes it, the scale a number (Native) or a 0-dim float64 tensor (Traced: a floating x keeps its dtype
// either way, an integer x becomes float32 times a number and float64 times the tensor).
at::Tensor scaledSoftmaxNativeChain(const at::Tensor &x, double scale, ScaleBy by = ScaleBy::Multiply);
at::Tensor scaledMaskedSoftmaxNativeChain(const at::Tensor &x, double scale, const at::Tensor &mask, ScaleBy by = ScaleBy::Multiply);
at::Tensor scaledSoftmaxTracedChain(const at::Tensor &x, double scale, ScaleBy by = ScaleBy::Multiply);
at::Tensor scaledMaskedSoftmaxTracedChain(const at::Tensor &x, double scale, const at::Tensor &mask, ScaleBy by = ScaleBy::Multiply);
// softmax((x + mask).view(size), -1): the fused native operator viewed where the view keeps the last
// dimension, the chain as written where it does not.
at::Tensor maskedSoftmaxNativeView(const at::Tensor &x, const at::Tensor &mask, at::IntArrayRef size);
// softmax((x * scale [+ mask]).float(), -1).to(dtype): the fused operator where x is floating and dtype is
// x's, else the chain as written (times a 0-dim float64 tensor where tensorScale).
at::Tensor scaledSoftmaxTo(const at::Tensor &x, double scale, const c10::optional<at::Tensor> &mask, at::ScalarType dtype, bool tensorScale);
at::Tensor siluMulChain(const at::Tensor &gate, const at::Tensor &up);
// gelu(gate, approximate) * up, approximate "tanh" or "none".
at::Tensor geluMulChain(const at::Tensor &gate, const at::Tensor &up, c10::string_view approximate);
// GELU's tanh form as Hugging Face's NewGELUActivation writes it, each call rounding to x's dtype; and times up.
at::Tensor geluNewChain(const at::Tensor &x);
at::Tensor geluNewMulChain(const at::Tensor &gate, const at::Tensor &up);
// QuickGELU as Hugging Face's QuickGELUActivation writes it, x * sigmoid(1.702 * x), in x's dtype.
at::Tensor quickGeluChain(const at::Tensor &x);
at::Tensor rmsNormCastChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute = at::kFloat);
// (h, y): h = x + residual, y = rmsNormCastChain(h, weight, eps, compute).
std::tuple<at::Tensor, at::Tensor> addRmsNormCastChain(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                       at::ScalarType compute = at::kFloat);
at::Tensor rmsNormCastTo(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype);
std::tuple<at::Tensor, at::Tensor> addRmsNormCastTo(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                    at::ScalarType dtype);
at::Tensor rmsNormOffsetChain(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType compute = at::kFloat);
// (h, y): h = x + residual, y = rmsNormOffsetChain(h, weight, eps, compute).
std::tuple<at::Tensor, at::Tensor> addRmsNormOffsetChain(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                         at::ScalarType compute = at::kFloat);
// The offset norm cast to `dtype` (a float32 trace's `type_as(output, x.float())`): the operators above
// through the dispatcher where dtype is x's (the sum's), else the chain rounded to dtype.
// kforge::rms_norm_offset on x, or where x is a [b, h, s, d] view of [b, s, h, d] memory, on its transpose
// (contiguous rows a pack's kernel takes), the result viewed back.
at::Tensor rmsNormOffsetHeads(const at::Tensor &x, const at::Tensor &weight, double eps);
at::Tensor rmsNormOffsetTo(const at::Tensor &x, const at::Tensor &weight, double eps, at::ScalarType dtype);
std::tuple<at::Tensor, at::Tensor> addRmsNormOffsetTo(const at::Tensor &x, const at::Tensor &residual, const at::Tensor &weight, double eps,
                                                      at::ScalarType dtype);
at::Tensor rotaryChain(const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t half);
// q [b, h, s, d] in any layout: rotarySliced(q.transpose(1, 2), ...) where q has four dims, else the chain on q.
at::Tensor rotaryHeads(const at::Tensor &q, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back);
at::Tensor rotarySliced(const at::Tensor &x, const at::Tensor &cos, const at::Tensor &sin, int64_t dim, int64_t half, int64_t backDim, int64_t back);

// Rewrites every method of the module (and its submodules) in place; returns how many chains it replaced
// in the module's forward (inlined, it holds every call the forward makes; a module without a forward
// counts its own methods).
int rewriteFusedPatterns(torch::jit::Module &module);

} // namespace kforge::runtime
