# tst_pack's half for python/kforge_fx.py, the FX pass: eager modules that write the attention-softmax chain
# in each spelling it covers, and near misses it must leave alone.
#   python3 fx_pass_test.py LIBKFORGE_RUNTIME [PACK]
# Prints one JSON line. "cases": per module, how many chains were rewritten, how many kforge operator calls
# the rewritten graph holds, and whether its outputs equal the module's bit for bit (the operators' own
# implementation is the chain). With PACK (a CPU pack whose kernel covers scaled_masked_softmax on scores of
# 2 x 2 x 64 x 64 with a 64 x 64 mask and scale 0.25), "pack": the runtime's counters and the outputs' distance
# for rewritten modules run with the pack loaded.
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import kforge_fx  # noqa: E402

B, H, S, D = 2, 2, 8, 4


def causal(n, dtype=torch.float32):
    return torch.full((n, n), torch.finfo(dtype).min, dtype=dtype).triu(1)


class Chain(torch.nn.Module):
    """One attention softmax, written by `scores` (q, k, mask buffer -> any value) and `soft` (s, q -> p)."""

    def __init__(self, body, n=S, dtype=torch.float32):
        super().__init__()
        self.body = body
        self.register_buffer("mask", causal(n, dtype))
        self.register_buffer("scale_tensor", torch.tensor(0.25, dtype=dtype))
        self.register_buffer("weight", torch.linspace(0.5, 1.5, D, dtype=dtype))
        # Rotary tables [s, d] for q read as a projection's [b, s, h, d] view (s = H here), and per sequence
        # [b, s, d] as Hugging Face's rotary module gives them (unsqueezed to [b, 1, s, d] by the chain).
        self.register_buffer("rope_cos_b", torch.linspace(-1.0, 1.0, B * H * D, dtype=dtype).view(B, H, D))
        self.register_buffer("rope_sin_b", torch.linspace(0.8, -0.6, B * H * D, dtype=dtype).view(B, H, D))
        self.register_buffer("rope_cos", torch.linspace(-1.0, 1.0, H * D, dtype=dtype).view(H, D))
        self.register_buffer("rope_sin", torch.linspace(0.9, -0.7, H * D, dtype=dtype).view(H, D))
        self.softmax_last = torch.nn.Softmax(dim=-1)
        self.silu = torch.nn.SiLU()
        self.gelu = torch.nn.GELU()
        # A norm's weight as models hold it, a parameter (symbolic tracing folds arithmetic on a buffer alone).
        self.norm_weight = torch.nn.Parameter(torch.linspace(-0.2, 0.3, D, dtype=dtype))
        self.softmax_dim1 = torch.nn.Softmax(dim=1)

    def forward(self, q, k):
        return self.body(self, q, k)


def rotate_half_hf(x):
    """Hugging Face's rotate_half, as transformers writes it."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_size(x):
    return torch.cat((-x[..., x.size(-1) // 2 :], x[..., : x.size(-1) // 2]), dim=-1)


def mm(q, k):
    return torch.matmul(q, k.transpose(2, 3))


# name -> forward body. Every chain below is the fused operator's meaning or a near miss of it.
BODIES = {
    # --- spellings that are the chain --------------------------------------------------------------------
    "decoder_block": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(q.dtype),
    "diffusion_block": lambda m, q, k: torch.softmax((mm(q, k) * 0.25).float(), -1).to(q.dtype),
    "functional_type_as": lambda m, q, k: F.softmax((mm(q, k) * 0.25 + m.mask).float(), dim=-1).type_as(q),
    "method_softmax_scores_dtype": lambda m, q, k: (lambda x: (x * 0.125).to(torch.float32).softmax(-1).to(x.dtype))(q @ k.transpose(-1, -2)),
    "swapped_operands_module_softmax": lambda m, q, k: m.softmax_last((m.mask + 0.25 * q.matmul(k.transpose(2, 3))).to(dtype=torch.float)).to(dtype=q.dtype),
    "torch_mul_add_alpha_flags": lambda m, q, k: F.softmax(torch.add(torch.mul(mm(q, k), 0.5), m.mask, alpha=1).to(torch.float32, False, False), -1).to(q.dtype),
    "keyword_flags": lambda m, q, k: torch.softmax(input=(mm(q, k) * 0.25 + m.mask).to(dtype=torch.float32, non_blocking=False, copy=False,
                                                                                      memory_format=torch.preserve_format), dim=-1).to(q.dtype, copy=False),
    "method_add_mask_first": lambda m, q, k: torch.softmax(m.mask.add(mm(q, k).mul(0.25)).float(), dim=-1).to(q.dtype),
    "int_scale": lambda m, q, k: torch.softmax((mm(q, k) * 2).float(), -1).to(q.dtype),
    "size_scale": lambda m, q, k: torch.softmax((mm(q, k) * q.shape[-1] ** -0.5).float(), -1).to(q.dtype),
    "two_layers": lambda m, q, k: torch.matmul(torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(q.dtype),
                                               torch.softmax((mm(k, q) * 0.5).float(), -1).to(k.dtype)),
    # --- near misses: not the chain, left alone ------------------------------------------------------------
    "softmax_dim_1": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), 1).to(q.dtype),
    "softmax_dim_3_of_4": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), 3).to(q.dtype),
    "module_softmax_dim_1": lambda m, q, k: m.softmax_dim1((mm(q, k) * 0.25).float()).to(q.dtype),
    "softmax_dtype_argument": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1, dtype=torch.float32).to(q.dtype),
    "tensor_scale": lambda m, q, k: torch.softmax((mm(q, k) * m.scale_tensor + m.mask).float(), -1).to(q.dtype),
    "bool_scale": lambda m, q, k: torch.softmax((mm(q, k) * True).float(), -1).to(q.dtype),
    "divided_by_scale": lambda m, q, k: torch.softmax((mm(q, k) / 4 + m.mask).float(), -1).to(q.dtype),
    "mask_subtracted": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 - m.mask).float(), -1).to(q.dtype),
    "alpha_2": lambda m, q, k: torch.softmax(torch.add(mm(q, k) * 0.25, m.mask, alpha=2).float(), -1).to(q.dtype),
    "upcast_to_double": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).double(), -1).to(q.dtype),
    "upcast_copies": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).to(torch.float32, copy=True), -1).to(q.dtype),
    "no_cast_back": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1),
    "cast_to_constant_dtype": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(torch.float32),
    "cast_to_another_tensors_dtype": lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(m.mask.dtype),
    "cast_to_scaled_scores_dtype": lambda m, q, k: (lambda s: torch.softmax(s.float(), -1).to(s.dtype))(mm(q, k) * 0.25 + m.mask),
    "log_softmax": lambda m, q, k: torch.log_softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(q.dtype),
    "scores_used_twice": lambda m, q, k: (lambda s: torch.softmax((s + m.mask).float(), -1).to(q.dtype) + s)(mm(q, k) * 0.25),
    "probabilities_used_twice": lambda m, q, k: (lambda p: p.to(q.dtype) * p.sum())(torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1)),
    # --- no scale (CLIP, Swin, Whisper scale q first; T5 not at all): scale 1.0, x the sum's first operand ----
    "unscaled_native": lambda m, q, k: torch.softmax(mm(q, k) + m.mask, -1),
    "unscaled_casts_type_as": lambda m, q, k: F.softmax((mm(q, k) + m.mask).float(), dim=-1).type_as(q),
    "unscaled_native_mask_first": lambda m, q, k: torch.softmax(m.mask + mm(q, k), -1),
    "unscaled_bias_then_mask": lambda m, q, k: torch.softmax(mm(q, k) + m.mask + m.mask, -1),
    "unscaled_same_operand": lambda m, q, k: (lambda s: torch.softmax(s + s, -1))(mm(q, k)),
    "unscaled_plus_number": lambda m, q, k: torch.softmax(mm(q, k) + 1.0, -1),
    "unscaled_view_bart": lambda m, q, k: F.softmax((mm(q, k).view(B * H, S, S).view(B, H, S, S) + m.mask).view(B * H, S, S), dim=-1),
    "unscaled_view_tuple": lambda m, q, k: torch.softmax((mm(q, k) + m.mask).view((B * H, S, S)), -1),
    "unscaled_view_other_last_dim": lambda m, q, k: torch.softmax((mm(q, k) + m.mask).view(B, H, S * S), -1),
    "unscaled_view_used_twice": lambda m, q, k: (lambda v: torch.softmax(v, -1) + v)((mm(q, k) + m.mask).view(B * H, S, S)),
    # --- the chains with no casts (the native operators): spellings, then near misses -------------------
    "native_float32": lambda m, q, k: torch.softmax(mm(q, k) * 0.25 + m.mask, -1),
    "native_method_no_mask": lambda m, q, k: (mm(q, k) * 0.125).softmax(dim=-1),
    "native_module_mask_first": lambda m, q, k: m.softmax_last(m.mask + 0.5 * q.matmul(k.transpose(2, 3))),
    "native_int_scale": lambda m, q, k: F.softmax(mm(q, k) * 2, dim=-1),
    "native_integer_scores": lambda m, q, k: torch.softmax(q.round().long() * 0.5, -1),
    "native_divided": lambda m, q, k: torch.softmax(mm(q, k) / 4, -1),
    "native_divided_sqrt_masked": lambda m, q, k: torch.softmax(mm(q, k) / math.sqrt(D + 1) + m.mask, -1),
    "native_method_div": lambda m, q, k: mm(q, k).div(math.sqrt(D + 1)).softmax(dim=-1),
    "native_true_divide_mask_first": lambda m, q, k: F.softmax(m.mask + torch.true_divide(mm(q, k), 3.0), dim=-1),
    "native_integer_scores_divided": lambda m, q, k: torch.softmax(q.round().long() / 2, -1),
    "native_divided_floor": lambda m, q, k: torch.softmax(torch.div(mm(q, k), 4, rounding_mode="floor"), -1),
    "native_number_over_scores": lambda m, q, k: torch.softmax(4.0 / mm(q, k), -1),
    "native_divided_by_tensor": lambda m, q, k: torch.softmax(mm(q, k) / m.scale_tensor, -1),
    "native_size_scale": lambda m, q, k: torch.softmax(mm(q, k) * q.shape[-1] ** -0.5, -1),
    "native_size_divided_masked": lambda m, q, k: torch.softmax(mm(q, k) / (q.size(-1) + 1) ** 0.5 + m.mask, -1),
    "native_scale_read_from_tensor": lambda m, q, k: torch.softmax(mm(q, k) * q.abs().max().item(), -1),
    "native_dim_1": lambda m, q, k: torch.softmax(mm(q, k) * 0.25, 1),
    "native_scores_used_twice": lambda m, q, k: (lambda s: torch.softmax(s, -1) + s)(mm(q, k) * 0.25),
    "native_tensor_scale": lambda m, q, k: torch.softmax(mm(q, k) * m.scale_tensor, -1),
    "native_mask_subtracted": lambda m, q, k: torch.softmax(mm(q, k) * 0.25 - m.mask, -1),
    "native_dtype_argument": lambda m, q, k: torch.softmax(mm(q, k) * 0.25, -1, dtype=torch.float64),
    # the upcast given to the softmax as its dtype (Llama's eager attention and the models written after it)
    "llama_softmax_dtype": lambda m, q, k: F.softmax(mm(q, k) * 0.25 + m.mask, dim=-1, dtype=torch.float32).to(q.dtype),
    "softmax_dtype_method_no_mask": lambda m, q, k: (mm(q, k) * 0.125).softmax(-1, dtype=torch.float).to(q.dtype),
    "softmax_dtype_unscaled_type_as": lambda m, q, k: torch.softmax(mm(q, k) + m.mask, -1, dtype=torch.float32).type_as(q),
    "softmax_dtype_float64": lambda m, q, k: F.softmax(mm(q, k) * 0.25 + m.mask, dim=-1, dtype=torch.float64).to(q.dtype),
    "softmax_dtype_no_cast_back": lambda m, q, k: F.softmax(mm(q, k) * 0.25 + m.mask, dim=-1, dtype=torch.float32),
}

# The pointwise chains, rewritten where the runtime registers their operators: name -> (operator, body).
POINTWISE = {
    "silu_mul_functional": ("silu_mul", lambda m, q, k: F.silu(q) * k),
    "silu_mul_module_swapped": ("silu_mul", lambda m, q, k: k * m.silu(q)),
    "silu_mul_torch_mul": ("silu_mul", lambda m, q, k: torch.mul(F.silu(q, inplace=False), k)),
    "silu_in_place": ("silu_mul", lambda m, q, k: F.silu(q * 1, inplace=True) * k),
    "silu_times_number": ("silu_mul", lambda m, q, k: F.silu(q) * 2.0),
    "silu_used_twice": ("silu_mul", lambda m, q, k: (lambda s: s * k + s)(F.silu(q))),
    "sigmoid_mul": ("silu_mul", lambda m, q, k: q * torch.sigmoid(q) * k),
    "rms_norm_decoder": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(q.dtype))(q.float())),
    "rms_norm_other_spellings": ("rms_norm_cast", lambda m, q, k: (lambda xf: (torch.rsqrt(1e-5 + torch.mean(xf ** 2, dim=[-1], keepdim=True)) * xf).to(q.dtype) * m.weight)(q.to(torch.float32))),
    "rms_norm_int_eps": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1)).to(q.dtype))(q.float())),
    "rms_norm_over_dim_2": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-2, True) + 1e-6)).to(q.dtype))(q.float())),
    "rms_norm_fourth_power": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(4).mean(-1, True) + 1e-6)).to(q.dtype))(q.float())),
    "rms_norm_keepdim_false": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, False) + 1e-6)[..., None]).to(q.dtype))(q.float())),
    "rms_norm_sqrt_divide": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf / torch.sqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(q.dtype))(q.float())),
    "add_rms_decoder": ("add_rms_norm_cast", lambda m, q, k: (lambda h: (lambda xf: h + m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(h.dtype))(h.float()))(q + k)),
    "add_rms_swapped_weight_last": ("add_rms_norm_cast", lambda m, q, k: (lambda h: (lambda xf: (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(h.dtype) * m.weight - h)(h.float()))(torch.add(k, q))),
    "add_rms_alpha_2": ("add_rms_norm_cast", lambda m, q, k: (lambda h: (lambda xf: h + m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(h.dtype))(h.float()))(torch.add(q, k, alpha=2))),
    "add_rms_h_used_before": ("add_rms_norm_cast", lambda m, q, k: (lambda h: (lambda t, xf: t + m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(h.dtype))(h * 2.0, h.float()))(q + k)),
    "rotary_hugging_face": ("rotary_embedding", lambda m, q, k: (lambda t, c, s: (t * c) + (rotate_half_hf(t) * s))(q.transpose(1, 2), m.rope_cos_b.unsqueeze(1), m.rope_sin_b.unsqueeze(1))),
    "rotary_size_method": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + rotate_half_size(t) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_half_of_another_tensor": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., k.shape[-1] // 2:], t[..., :k.shape[-1] // 2]), dim=-1) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_decoder": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., 2:], t[..., :2]), dim=-1) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_swapped": ("rotary_embedding", lambda m, q, k: (lambda t: m.rope_sin * torch.cat([-t[..., 2:], t[..., 0:2]], -1) + m.rope_cos * t)(torch.transpose(q, 2, 1))),
    "rotary_other_half": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., 1:], t[..., :1]), dim=-1) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_halves_swapped": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((t[..., :2], -t[..., 2:]), dim=-1) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_minus": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos - torch.cat((-t[..., 2:], t[..., :2]), dim=-1) * m.rope_sin)(q.transpose(1, 2))),
    "rotary_q_used_twice": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., 2:], t[..., :2]), dim=-1) * m.rope_sin + t)(q.transpose(1, 2))),
    "rotary_number_tables": ("rotary_embedding", lambda m, q, k: (lambda t: t * 0.5 + torch.cat((-t[..., 2:], t[..., :2]), dim=-1) * 0.25)(q.transpose(1, 2))),
    "rotary_after_a_norm": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., 2:], t[..., :2]), dim=-1) * m.rope_sin)(q.transpose(1, 2) * 2.0)),
    "rotary_mismatched_halves": ("rotary_embedding", lambda m, q, k: (lambda t: t * m.rope_cos + torch.cat((-t[..., 1:], t[..., :3]), dim=-1)[..., :4] * m.rope_sin)(q.transpose(1, 2))),
    "rms_norm_constant_dtype": ("rms_norm_cast", lambda m, q, k: (lambda xf: m.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + 1e-6)).to(torch.float32))(q.float())),
    # the GELU gates (Gemma's tanh form, GeGLU's exact GELU)
    "gelu_tanh_mul_functional": ("gelu_tanh_mul", lambda m, q, k: F.gelu(q, approximate="tanh") * k),
    "gelu_mul_module_swapped": ("gelu_mul", lambda m, q, k: k * m.gelu(q)),
    "gelu_tanh_times_number": ("gelu_tanh_mul", lambda m, q, k: F.gelu(q, approximate="tanh") * 2.0),
    # NewGELU written out (Hugging Face's "gelu_new"), alone and as T5 v1.1's gate; only its own numbers
    "gelu_new": ("gelu_new", lambda m, q, k: new_gelu(q)),
    "gelu_new_gate": ("gelu_new_mul", lambda m, q, k: new_gelu(q) * k),
    "gelu_new_other_spellings": ("gelu_new", lambda m, q, k: (1.0 + (q + q.pow(3.0) * 0.044715).mul(math.sqrt(2.0 / math.pi)).tanh()) * (q * 0.5)),
    "gelu_new_times_number": ("gelu_new", lambda m, q, k: new_gelu(q) * 2.0),
    "gelu_new_int_exponent": ("gelu_new", lambda m, q, k: 0.5 * q * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (q + 0.044715 * torch.pow(q, 3))))),
    "gelu_new_rounded_constant": ("gelu_new", lambda m, q, k: 0.5 * q * (1.0 + torch.tanh(0.7978845608 * (q + 0.044715 * torch.pow(q, 3.0))))),
    "gelu_new_tanh_used_twice": ("gelu_new", lambda m, q, k: (lambda t: 0.5 * q * (1.0 + t) + t)(torch.tanh(math.sqrt(2.0 / math.pi) * (q + 0.044715 * torch.pow(q, 3.0))))),
    # Gemma's RMSNorm: the product in float32 with one plus the weight, type_as back
    "rms_norm_gemma": ("rms_norm_offset", lambda m, q, k: (lambda xf: (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + m.norm_weight.float())).type_as(q))(q.float())),
    "rms_norm_gemma_weight_first": ("rms_norm_offset", lambda m, q, k: (lambda xf: ((m.norm_weight.float() + 1.0) * (torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * xf)).type_as(q))(q.float())),
    # QuickGELU (CLIP), either order and side; only 1.702
    "quick_gelu": ("quick_gelu", lambda m, q, k: q * torch.sigmoid(1.702 * q)),
    "quick_gelu_swapped": ("quick_gelu", lambda m, q, k: (q * 1.702).sigmoid() * q),
    "quick_gelu_other_scale": ("quick_gelu", lambda m, q, k: q * torch.sigmoid(1.5 * q)),
    "quick_gelu_of_another_tensor": ("quick_gelu", lambda m, q, k: k * torch.sigmoid(1.702 * q)),
    "rms_norm_gemma_heads": ("rms_norm_offset", lambda m, q, k: (lambda t: (lambda xf: (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + m.norm_weight.float())).type_as(t))(t.float()))(q.transpose(1, 2))),
    "rms_norm_gemma_plus_two": ("rms_norm_offset", lambda m, q, k: (lambda xf: (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (2.0 + m.norm_weight.float())).type_as(q))(q.float())),
    "add_rms_gemma": ("add_rms_norm_offset", lambda m, q, k: (lambda h: (lambda xf: h + (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * (1.0 + m.norm_weight.float())).type_as(h))(h.float()))(q + k)),
}


def new_gelu(x):
    """Hugging Face's NewGELUActivation.forward."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class MaskArgument(torch.nn.Module):
    """The mask a forward argument (as Hugging Face models pass it): a value the graph cannot type."""

    def forward(self, q, k, mask):
        return torch.softmax((mm(q, k) * 0.25 + mask).float(), -1).to(q.dtype)


class Outer(torch.nn.Module):
    """The chain inside a submodule: symbolic tracing inlines it, the rewrite finds it there."""

    def __init__(self):
        super().__init__()
        self.attn = Chain(BODIES["decoder_block"])

    def forward(self, q, k):
        return self.attn(q, k) * 2


def kforge_calls(gm):
    return sum(kforge_fx.fused_calls(gm).values())


def same(a, b):
    return torch.equal(a, b) and a.dtype == b.dtype


def case_result(module, inputs_list):
    reference = [module(*inputs) for inputs in inputs_list]
    gm, count = kforge_fx.rewrite_fused_patterns(module)
    again, count_again = kforge_fx.rewrite_fused_patterns(gm)  # in place: nothing left to rewrite
    return {"count": count, "kforge_calls": kforge_calls(gm), "ops": kforge_fx.fused_calls(gm), "again": count_again, "in_place": again is gm,
            "equal": all(same(gm(*inputs), ref) for inputs, ref in zip(inputs_list, reference))}


def main():
    lib = sys.argv[1]
    pack = sys.argv[2] if len(sys.argv) > 2 else None
    out = {"torch": torch.__version__}
    try:
        kforge_fx.rewrite_fused_patterns(Chain(BODIES["decoder_block"]))
        out["refused_without_library"] = ""
    except RuntimeError as e:
        out["refused_without_library"] = str(e)
    torch.ops.load_library(lib)
    torch.manual_seed(7)
    q, k = torch.randn(B, H, S, D), torch.randn(B, H, S, D)
    cases = {}
    with torch.no_grad():
        for name, body in BODIES.items():
            cases[name] = case_result(Chain(body), [(q, k)])
        hq, hk = q.to(torch.bfloat16), k.to(torch.bfloat16)
        cases["decoder_block_bfloat16"] = case_result(Chain(BODIES["decoder_block"], dtype=torch.bfloat16), [(hq, hk)])
        cases["native_bfloat16"] = case_result(Chain(BODIES["native_float32"], dtype=torch.bfloat16), [(hq, hk)])
        cases["llama_softmax_dtype_bfloat16"] = case_result(Chain(BODIES["llama_softmax_dtype"], dtype=torch.bfloat16), [(hq, hk)])
        cases["cast_to_constant_bfloat16"] = case_result(
            Chain(lambda m, q, k: torch.softmax((mm(q, k) * 0.25 + m.mask).float(), -1).to(torch.bfloat16), dtype=torch.bfloat16), [(hq, hk)])
        # A forward-argument mask: a tensor takes the operator, a Python number the chain as written.
        cases["mask_argument"] = case_result(MaskArgument(), [(q, k, causal(S)), (q, k, -0.5)])
        cases["submodule"] = case_result(Outer(), [(q, k)])
        for name, (op, body) in POINTWISE.items():
            if kforge_fx._optional_op(op) is None:
                cases[name] = {"skipped": "this runtime registers no kforge::%s" % op}
            else:
                cases[name] = case_result(Chain(body), [(q, k)])
        if kforge_fx._optional_op("rms_norm_offset") is not None:
            cases["rms_norm_gemma_bfloat16"] = case_result(Chain(POINTWISE["rms_norm_gemma"][1], dtype=torch.bfloat16), [(hq, hk)])
            cases["gelu_tanh_mul_bfloat16"] = case_result(Chain(POINTWISE["gelu_tanh_mul_functional"][1], dtype=torch.bfloat16), [(hq, hk)])
            cases["gelu_new_gate_bfloat16"] = case_result(Chain(POINTWISE["gelu_new_gate"][1], dtype=torch.bfloat16), [(hq, hk)])
        else:
            cases["rms_norm_gemma_bfloat16"] = {"skipped": "this runtime registers no kforge::rms_norm_offset"}
            cases["gelu_tanh_mul_bfloat16"] = {"skipped": "this runtime registers no kforge::gelu_tanh_mul"}
            cases["gelu_new_gate_bfloat16"] = {"skipped": "this runtime registers no kforge::gelu_new_mul"}
        if kforge_fx._optional_op("rms_norm_cast") is not None:
            cases["rms_norm_bfloat16"] = case_result(Chain(POINTWISE["rms_norm_decoder"][1], dtype=torch.bfloat16), [(hq, hk)])
        else:
            cases["rms_norm_bfloat16"] = {"skipped": "this runtime registers no kforge::rms_norm_cast"}
    out["cases"] = cases
    if pack:
        out["pack"] = with_pack(pack)
    print(json.dumps(out))


def with_pack(pack):
    """The rewritten modules with the pack loaded: covered scores take the kernel; another shape and the near
    misses do not reach the fused operator."""
    torch.manual_seed(11)
    n = 64
    q, k = torch.randn(B, H, n, 16), torch.randn(B, H, n, 16)
    small_q, small_k = torch.randn(B, H, 32, 16), torch.randn(B, H, 32, 16)
    covered = Chain(BODIES["decoder_block"], n=n)
    other_shape = Chain(BODIES["decoder_block"], n=32)
    near_miss = Chain(BODIES["no_cast_back"], n=n)
    result = {}
    with torch.no_grad():
        refs = {"covered": covered(q, k), "mask_argument": MaskArgument()(q, k, causal(n)), "other_shape": other_shape(small_q, small_k),
                "near_miss": near_miss(q, k)}
        runs = {"covered": (kforge_fx.load_pack(covered, pack, sys.argv[1]), (q, k)),
                "mask_argument": (kforge_fx.rewrite_fused_patterns(MaskArgument())[0], (q, k, causal(n))),
                "other_shape": (kforge_fx.rewrite_fused_patterns(other_shape)[0], (small_q, small_k)),
                "near_miss": (kforge_fx.rewrite_fused_patterns(near_miss)[0], (q, k))}
        result["fused_chains"] = runs["covered"][0].kforge_fused_chains
        for name, (gm, inputs) in runs.items():
            torch.ops.kforge.reset_counters()
            y = gm(*inputs)
            result[name] = {"counters": json.loads(torch.ops.kforge.counters()),
                            "max_diff": (y.double() - refs[name].double()).abs().max().item(), "equal": same(y, refs[name])}
        torch.ops.kforge.unload_packs()
    return result


if __name__ == "__main__":
    main()
