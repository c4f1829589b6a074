"""The FX pass: an eager PyTorch model's fused chains (attention softmax, and the pointwise ones) rewritten to
kforge's fused operators.

    import torch, kforge_fx
    torch.ops.load_library("libkforge_runtime.so")
    module, n = kforge_fx.rewrite_fused_patterns(model)      # n chains now call torch.ops.kforge.*
    torch.ops.kforge.load_pack("my-pack")                     # the pack's kernels stand in front of them
    # or, in one call:  module = kforge_fx.load_pack(model, "my-pack", "libkforge_runtime.so")

The Python half of runtime::rewriteFusedPatterns (runtime/fused_ops.cpp), with the same exactness rules.
It replaces, found by data flow in the torch.fx graph and in no other case,

    softmax((x * scale).float(), -1).to(x.dtype)            by torch.ops.kforge.scaled_softmax(x, scale)
    softmax((x * scale + mask).float(), -1).to(x.dtype)     by torch.ops.kforge.scaled_masked_softmax(x, scale, mask)
    softmax(x * scale, -1)                                  by torch.ops.kforge.scaled_softmax_native(x, scale)
    softmax(x * scale + mask, -1)                           by torch.ops.kforge.scaled_masked_softmax_native(x, scale, mask)
    softmax(x / divisor [+ mask], -1)                       by torch.ops.kforge.scaled_[masked_]softmax_native_div(x, divisor[, mask])
    softmax((x + mask).float(), -1).to(x.dtype), no scale   by torch.ops.kforge.scaled_masked_softmax(x, 1.0, mask)
    softmax(x + mask, -1), no scale                         by torch.ops.kforge.scaled_masked_softmax_native(x, 1.0, mask)
    softmax((x + mask).view(size), -1), no scale            by torch.ops.kforge.masked_softmax_native_view(x, mask, size)

(x * 1.0 is x exactly: CLIP, Swin and Whisper scale q before the product, T5 not at all; with no scale, x
is the sum's first operand, and both are checked to be tensors when the call runs), the native ones, a model that computes in one dtype (float32 models, or bfloat16 ones with no upcast), checked
when they run: a floating x (and a tensor mask) takes the operator, anything else the chain as written.

Each operator's own implementation is that chain, so the rewritten module computes bit for bit what the model
did; with a pack loaded, a kernel for the operator takes the call where its guard covers it.

A match must be, as in the C++ filter: a scale that is a number, written in the model or computed from
tensor sizes (`q.shape[-1] ** -0.5`: arithmetic on extents and numbers; not a tensor, not a value read
from a tensor; a bool is not a number here), a softmax over dim -1 with no dtype of its own (or, for the
chains with casts, dtype torch.float32 in place of the upcast),
an add whose alpha is 1, and, for the chains with casts, an upcast to float32 that neither copies nor
changes the memory format and a cast back to x's own dtype read from the graph: `x.dtype`, or the dtype of
an input of the matmul that produced x (`torch.matmul(q, k.transpose(-2, -1)) * c ... .to(q.dtype)`; matmul
does not promote, so q's dtype is x's). The chain's intermediate values must have no other use. Anything
else, e.g. a softmax over dim 1, a dtype argument in a native chain (or any but float32), a tensor scale, a division in a chain with casts, a cast to a
constant dtype (torch.bfloat16: the graph does not say it is x's) or an upcast with no cast back, is left
as the model wrote it.

The spellings accepted are those whose meaning is the chain's:
    scale        x * c, c * x (Python operators), torch.mul(x, c), x.mul(c)
    divisor      x / c, torch.div(x, c) and x.div(c) with no rounding mode, torch.true_divide(x, c),
                 x.true_divide(c) (the native chains only; true division promotes an integer x to float in
                 the operator's chain as in the model's, so an int c is the same divisor)
    mask         s + m, m + s, torch.add(s, m), torch.add(m, s), s.add(m), m.add(s) (alpha absent or 1)
    upcast       t.float(), t.to(torch.float32) (torch.float is torch.float32), t.to(dtype=torch.float32),
                 with non_blocking/copy False and memory_format torch.preserve_format where given
    softmax      torch.softmax(u, -1), torch.nn.functional.softmax(u, dim=-1), u.softmax(-1), an
                 nn.Softmax(dim=-1) submodule (its class exactly), dim given by position or name
    upcast and softmax together
                 any of those softmax spellings given dtype=torch.float32 (torch.float), which converts u
                 first: Llama's `softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)`
    cast back    p.to(D), p.to(dtype=D) with D = x.dtype or q.dtype as above; p.type_as(x) or p.type_as(q)
                 (type_as is .to(other's dtype and device); x, q and the scores share one device)
Addition and multiplication commute exactly in IEEE arithmetic and promote their operands alike, so the
swapped operand orders are the same values. The mask is a tensor of the graph: a buffer or parameter
(get_attr), or any other value of the graph, which is checked to be a tensor when the call runs (a Python
number there takes the chain as written).

The pointwise chains, where the runtime registers their operators (the C++ rewrite's other patterns):

    silu(gate) * up                                          by torch.ops.kforge.silu_mul(gate, up)
    gelu(gate, approximate="tanh") * up                      by torch.ops.kforge.gelu_tanh_mul(gate, up)
    gelu(gate) * up                                          by torch.ops.kforge.gelu_mul(gate, up)
    0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
                                                             by torch.ops.kforge.gelu_new(x)   (Hugging Face's
                                                             NewGELUActivation, "gelu_new": GPT-2, GPT-J, CodeGen)
    <that> * up                                              by torch.ops.kforge.gelu_new_mul(x, up)   (T5 v1.1's gate)
    x * torch.sigmoid(1.702 * x)                             by torch.ops.kforge.quick_gelu(x)   (Hugging Face's
                                                             QuickGELUActivation: CLIP)
    w * (xf * rsqrt(xf.pow(2).mean(-1, True) + eps)).to(x.dtype), xf = x.float()
                                                             by torch.ops.kforge.rms_norm_cast(x, w, eps)
    (xf * rsqrt(xf.pow(2).mean(-1, True) + eps) * (1.0 + w.float())).type_as(x)   (Gemma's)
                                                             by torch.ops.kforge.rms_norm_offset(x, w, eps)
                                                             (rms_norm_offset_heads where x is a transpose's
                                                             output: Gemma 3's q and k per head)

A residual add right before either RMSNorm, where the runtime registers its operator:

    h = a + b; <the RMSNorm above of h>                      by h, y = torch.ops.kforge.add_rms_norm_cast(a, b, w, eps)
                                                             (add_rms_norm_offset for Gemma's)

a + b with alpha absent or 1, either order; h keeps its other uses (the next residual), which must come after
the norm in the graph.

The rotary embedding, where the runtime registers its operator:

    q = x.transpose(1, 2); q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin
                                                             by torch.ops.kforge.rotary_embedding(x, cos, sin, half)

x is the projection's [b, s, h, d] view; the transpose is x.transpose(1, 2) (or 2, 1; torch.transpose) used only
by the chain; the slices `q[..., :half]` (or `0:half`) and `q[..., half:]` at one `half` (a number or a value of the
graph, or each slice's own `q.shape[-1] // 2` or `q.size(-1) // 2`, as Hugging Face's rotate_half writes it); the cat of the negated back half and the front half over dim -1; each
product either way round and the sum either order. cos and sin are values of the graph (a Python number there
takes the chain as written).

silu is F.silu (not in place) or an nn.SiLU submodule (not in place), `up` a value of the graph (a Python
number there takes the chain); either product order. RMSNorm: the upcast to float32 as above, the square as
pow 2 (`xf.pow(2)`, `xf ** 2`, torch.pow; 2 or 2.0), the mean over dim -1 ([-1] or (-1,)) kept, no dtype,
eps a float written in the model added with alpha 1 (either order), rsqrt, the cast back to x's own dtype
(`.to(x.dtype)`), the products either way round; xf used only by the square and the product.

Works with torch 1.13 and 2.x (torch.fx.symbolic_trace). A model that does not trace symbolically (control
flow on tensor values) is refused with torch.fx's own reason.
"""

import math
import operator

import torch
import torch.fx

__all__ = ["rewrite_fused_patterns", "fused_calls", "load_pack"]

_F32 = torch.float32
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # NewGELU's constant as Python computes it
_MISSING = object()


def _ops():
    """The kforge operators, or a clear error saying how to get them."""
    try:
        return torch.ops.kforge.scaled_softmax, torch.ops.kforge.scaled_masked_softmax
    except (AttributeError, RuntimeError) as e:
        raise RuntimeError("torch.ops.kforge.scaled_softmax / scaled_masked_softmax are not registered in this process: "
                           "load kforge's runtime first, torch.ops.load_library('.../libkforge_runtime.so') (%s)" % e) from None


def _scaled_masked_softmax_checked(x, scale, mask):
    """The fused operator where the mask is a tensor; the chain as written where the model passed a number."""
    if isinstance(mask, torch.Tensor):
        return torch.ops.kforge.scaled_masked_softmax(x, scale, mask)
    return torch.softmax((x * scale + mask).float(), -1).to(x.dtype)


def _scaled_softmax_native_checked(x, scale):
    """softmax(x * scale, -1) in the scores' own dtype: the native operator where x is floating (an integer x
    times an int scale stays integer, times the operator's float it would not), else the chain as written."""
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return torch.ops.kforge.scaled_softmax_native(x, scale)
    return torch.softmax(x * scale, -1)


def _scaled_masked_softmax_native_checked(x, scale, mask):
    """softmax(x * scale + mask, -1) in the scores' own dtype: the native operator where x is floating and the
    mask a tensor, else the chain as written."""
    if isinstance(x, torch.Tensor) and x.is_floating_point() and isinstance(mask, torch.Tensor):
        return torch.ops.kforge.scaled_masked_softmax_native(x, scale, mask)
    return torch.softmax(x * scale + mask, -1)


def _scaled_softmax_native_div_checked(x, divisor):
    """softmax(x / divisor, -1) in the scores' own dtype: the native operator where x is floating, else the
    chain as written."""
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return torch.ops.kforge.scaled_softmax_native_div(x, divisor)
    return torch.softmax(x / divisor, -1)


def _scaled_masked_softmax_native_div_checked(x, divisor, mask):
    """softmax(x / divisor + mask, -1) in the scores' own dtype: the native operator where x is floating and
    the mask a tensor, else the chain as written."""
    if isinstance(x, torch.Tensor) and x.is_floating_point() and isinstance(mask, torch.Tensor):
        return torch.ops.kforge.scaled_masked_softmax_native_div(x, divisor, mask)
    return torch.softmax(x / divisor + mask, -1)


def _masked_softmax_checked(x, mask):
    """softmax((x + mask).float(), -1).to(x.dtype), no scale: the fused operator with scale 1.0 (x * 1.0 is x)
    where both are tensors, else the chain as written."""
    if isinstance(x, torch.Tensor) and isinstance(mask, torch.Tensor):
        return torch.ops.kforge.scaled_masked_softmax(x, 1.0, mask)
    return torch.softmax((x + mask).float(), -1).to(x.dtype)


def _masked_softmax_native_checked(x, mask):
    """softmax(x + mask, -1) in the scores' own dtype, no scale: the native operator with scale 1.0 where x is
    floating and the mask a tensor, else the chain as written."""
    if isinstance(x, torch.Tensor) and x.is_floating_point() and isinstance(mask, torch.Tensor):
        return torch.ops.kforge.scaled_masked_softmax_native(x, 1.0, mask)
    return torch.softmax(x + mask, -1)


def _masked_softmax_native_view_checked(x, mask, size):
    """softmax((x + mask).view(size), -1), no scale (BART, OPT, Whisper, CLIP): the operator where both are
    tensors and the size is ints (it takes the fused one where the view keeps the last dimension), else the
    chain as written."""
    if isinstance(x, torch.Tensor) and isinstance(mask, torch.Tensor) and all(type(d) is int for d in size):
        return torch.ops.kforge.masked_softmax_native_view(x, mask, list(size))
    return torch.softmax((x + mask).view(*size), -1)


def _silu_mul_checked(gate, up):
    if isinstance(up, torch.Tensor):
        return torch.ops.kforge.silu_mul(gate, up)
    return torch.nn.functional.silu(gate) * up


def _gelu_tanh_mul_checked(gate, up):
    if isinstance(up, torch.Tensor):
        return torch.ops.kforge.gelu_tanh_mul(gate, up)
    return torch.nn.functional.gelu(gate, approximate="tanh") * up


def _gelu_mul_checked(gate, up):
    if isinstance(up, torch.Tensor):
        return torch.ops.kforge.gelu_mul(gate, up)
    return torch.nn.functional.gelu(gate) * up


_GELU_CHECKED = {"tanh": _gelu_tanh_mul_checked, "none": _gelu_mul_checked}


def _gelu_new_chain(x):
    return 0.5 * x * (1.0 + torch.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * torch.pow(x, 3.0))))


def _gelu_new_mul_checked(gate, up):
    if isinstance(up, torch.Tensor):
        return torch.ops.kforge.gelu_new_mul(gate, up)
    return _gelu_new_chain(gate) * up


def _rms_norm_offset_checked(x, weight, eps):
    if isinstance(weight, torch.Tensor):
        return torch.ops.kforge.rms_norm_offset(x, weight, eps)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + eps) * (1.0 + weight.float())).type_as(x)


def _add_rms_norm_offset_checked(x, residual, weight, eps):
    if isinstance(x, torch.Tensor) and isinstance(residual, torch.Tensor) and isinstance(weight, torch.Tensor):
        return torch.ops.kforge.add_rms_norm_offset(x, residual, weight, eps)
    h = x + residual
    return h, _rms_norm_offset_checked(h, weight, eps)


def _rms_norm_cast_checked(x, weight, eps):
    if isinstance(weight, torch.Tensor):
        return torch.ops.kforge.rms_norm_cast(x, weight, eps)
    xf = x.float()
    return weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, True) + eps)).to(x.dtype)


def _add_rms_norm_cast_checked(x, residual, weight, eps):
    if isinstance(x, torch.Tensor) and isinstance(residual, torch.Tensor) and isinstance(weight, torch.Tensor):
        return torch.ops.kforge.add_rms_norm_cast(x, residual, weight, eps)
    h = x + residual
    return h, _rms_norm_cast_checked(h, weight, eps)


def _rotary_checked(x, cos, sin, half):
    if isinstance(cos, torch.Tensor) and isinstance(sin, torch.Tensor):
        return torch.ops.kforge.rotary_embedding(x, cos, sin, half)
    q = x.transpose(1, 2)
    return q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin


def _rotary_heads_checked(q, cos, sin, half):
    """The rotary embedding of q [b, h, s, d] in any layout: kforge's operator on q.transpose(1, 2) (a pack's
    kernel takes it where that is contiguous) where q has four dims and the tables are tensors, else the chain."""
    if isinstance(cos, torch.Tensor) and isinstance(sin, torch.Tensor) and q.dim() == 4:
        return torch.ops.kforge.rotary_embedding(q.transpose(1, 2), cos, sin, half)
    return q * cos + torch.cat((-q[..., half:], q[..., :half]), dim=-1) * sin


def _optional_op(name):
    """A fused operator of this runtime that not every build has, or None."""
    try:
        return getattr(torch.ops.kforge, name)
    except (AttributeError, RuntimeError):
        return None


# --- reading one node's call --------------------------------------------------------------------------


def _is_method(node, name):
    return node.op == "call_method" and node.target == name


def _is_function(node, *targets):
    return node.op == "call_function" and any(node.target is t for t in targets)


def _call_args(node, names, allowed_kwargs=()):
    """The call's arguments by name, positional first (for a method, `self` is the first name), or None where
    it passes one this reader does not know: such a call is not one of the spellings."""
    if len(node.args) > len(names):
        return None
    got = dict(zip(names, node.args))
    for k, v in node.kwargs.items():
        if k in got or (k not in names and k not in allowed_kwargs):
            return None
        got[k] = v
    return got


def _is_number(v):
    return type(v) in (int, float)  # not bool, not a numpy scalar, not a tensor


# Arithmetic that keeps a number a number: what a scale computed from sizes is made of.
_ARITHMETIC = (operator.pow, operator.mul, operator.truediv, operator.floordiv, operator.add, operator.sub, operator.neg)


def _size_number(v):
    """Whether v is a number when the graph runs: a Python number written in the model (not a bool), or
    arithmetic whose every leaf is one or an extent of a tensor (q.shape[-1] ** -0.5, q.size(-1) ** 0.5),
    as symbolic tracing records a scale the model computes from its sizes."""
    if _is_number(v):
        return True
    if not isinstance(v, torch.fx.Node) or v.kwargs:
        return False
    if _is_method(v, "size"):
        return len(v.args) == 2 and type(v.args[1]) is int
    if _is_function(v, operator.getitem) and len(v.args) == 2 and type(v.args[1]) is int:
        seq = v.args[0]
        return isinstance(seq, torch.fx.Node) and not seq.kwargs and (
            (_is_function(seq, getattr) and len(seq.args) == 2 and seq.args[1] == "shape") or (_is_method(seq, "size") and len(seq.args) == 1))
    if _is_function(v, *_ARITHMETIC):
        return all(_size_number(a) for a in v.args)
    return False


def _is_one(v):
    return _is_number(v) and v == 1


def _single_use(node, user):
    return len(node.users) == 1 and user in node.users


def _no_copy_no_format(a):
    """A cast's flags as the fused operator assumes them: no copy, not non-blocking, the memory format kept."""
    return (a.get("non_blocking", False) is False and a.get("copy", False) is False
            and a.get("memory_format", torch.preserve_format) is torch.preserve_format)


_TO_NAMES = ("self", "dtype", "non_blocking", "copy", "memory_format")


def _dtype_cast(node):
    """(source, dtype argument) when the node is `t.to(dtype ...)` with no copy and no format change, else None."""
    if not _is_method(node, "to"):
        return None
    a = _call_args(node, _TO_NAMES)
    if a is None or "dtype" not in a or not _no_copy_no_format(a):
        return None
    return a["self"], a["dtype"]


def _float32_upcast(node):
    """t when the node is t cast to float32 (the first cast of the chain), else None."""
    if _is_method(node, "float"):
        a = _call_args(node, ("self",), ("memory_format",))
        if a is not None and a.get("memory_format", torch.preserve_format) is torch.preserve_format:
            return a["self"]
        return None
    cast = _dtype_cast(node)
    if cast is not None and cast[1] is _F32:
        return cast[0]
    return None


def _softmax_input(gm, node, dtype=None):
    """u when the node is a softmax of u over dim -1 with the given dtype (None: no dtype of its own), else None."""
    if _is_function(node, torch.softmax, torch.Tensor.softmax) or _is_method(node, "softmax"):
        a = _call_args(node, ("input" if node.op == "call_function" and node.target is torch.softmax else "self", "dim", "dtype"))
    elif _is_function(node, torch.nn.functional.softmax):
        a = _call_args(node, ("input", "dim", "_stacklevel", "dtype"))
    elif node.op == "call_module":
        sub = gm.get_submodule(node.target)
        if type(sub) is not torch.nn.Softmax or node.kwargs or len(node.args) != 1:
            return None
        a = {"input": node.args[0], "dim": sub.dim}
    else:
        return None
    if a is None:
        return None
    source = a.get("input", a.get("self"))
    dim = a.get("dim", _MISSING)
    if type(dim) is not int or dim != -1 or a.get("dtype") is not dtype:
        return None
    return source if isinstance(source, torch.fx.Node) else None


def _scaled(node):
    """(x, scale) when the node is x times a number (written, or computed from sizes), else None."""
    if _is_function(node, operator.mul):
        a, b = node.args if len(node.args) == 2 and not node.kwargs else (None, None)
        if isinstance(a, torch.fx.Node) and not _size_number(a) and _size_number(b):
            return a, b
        if isinstance(b, torch.fx.Node) and not _size_number(b) and _size_number(a):
            return b, a
        return None
    if _is_function(node, torch.mul):
        a = _call_args(node, ("input", "other"))
    elif _is_method(node, "mul"):
        a = _call_args(node, ("self", "other"))
    else:
        return None
    if a is None or "other" not in a:
        return None
    x = a.get("input", a.get("self"))
    return (x, a["other"]) if isinstance(x, torch.fx.Node) and _size_number(a["other"]) else None


def _divided(node):
    """(x, c) when the node is x divided by a number c (true division; written, or computed from sizes),
    else None."""
    if _is_function(node, operator.truediv):
        a, b = node.args if len(node.args) == 2 and not node.kwargs else (None, None)
        return (a, b) if isinstance(a, torch.fx.Node) and not _size_number(a) and _size_number(b) else None
    if _is_function(node, torch.div, torch.true_divide):
        a = _call_args(node, ("input", "other", "rounding_mode"))
    elif _is_method(node, "div") or _is_method(node, "true_divide"):
        a = _call_args(node, ("self", "other", "rounding_mode"))
    else:
        return None
    if a is None or "other" not in a or a.get("rounding_mode") is not None:
        return None
    x = a.get("input", a.get("self"))
    return (x, a["other"]) if isinstance(x, torch.fx.Node) and _size_number(a["other"]) else None


def _sum_operands(node):
    """(a, b) when the node is a + b (alpha absent or 1) of two values of the graph, else None."""
    got = _add_operands(node)
    if got is None:
        return None
    a, b = got
    return (a, b) if isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node) else None


def _add_operands(node):
    """(a, b) when the node is a + b, written as an operator, torch.add or .add, alpha absent or 1, else None."""
    if _is_function(node, operator.add):
        return tuple(node.args) if len(node.args) == 2 and not node.kwargs else None
    if _is_function(node, torch.add):
        got = _call_args(node, ("input", "other"), ("alpha",))
    elif _is_method(node, "add"):
        got = _call_args(node, ("self", "other"), ("alpha",))
    else:
        return None
    if got is None or "other" not in got or not _is_one(got.get("alpha", 1)):
        return None
    return got.get("input", got.get("self")), got["other"]


def _matmul_inputs(node):
    if _is_function(node, torch.matmul, operator.matmul) and len(node.args) == 2 and not node.kwargs:
        return list(node.args)
    if _is_method(node, "matmul") and len(node.args) == 2 and not node.kwargs:
        return list(node.args)
    return []


def _has_dtype_of(t, x):
    """Whether tensor t certainly has x's dtype (and device): t is x, or an input of the matmul that made x."""
    return isinstance(t, torch.fx.Node) and (t is x or t in _matmul_inputs(x))


def _cast_back_to(node, p):
    """(the tensor whose dtype the cast reads, the getattr node that reads it or None) when the node casts p to
    a tensor's dtype, else None."""
    if _is_method(node, "type_as"):
        a = _call_args(node, ("self", "other"))
        return (a["other"], None) if a is not None and "other" in a and a["self"] is p else None
    cast = _dtype_cast(node)
    if cast is None or cast[0] is not p:
        return None
    d = cast[1]
    if isinstance(d, torch.fx.Node) and _is_function(d, getattr) and len(d.args) == 2 and d.args[1] == "dtype" and not d.kwargs:
        return d.args[0], d
    return None


def _tensor_attr(gm, node):
    if node.op != "get_attr":
        return False
    value = gm
    for part in node.target.split("."):
        value = getattr(value, part, None)
    return isinstance(value, torch.Tensor)


def _product_operands(node):
    """(a, b) when the node is a * b of two values of the graph, else None."""
    if _is_function(node, operator.mul):
        got = dict(zip(("a", "b"), node.args)) if len(node.args) == 2 and not node.kwargs else None
    elif _is_function(node, torch.mul):
        got = _call_args(node, ("a", "b"))
    elif _is_method(node, "mul"):
        got = _call_args(node, ("a", "b"))
    else:
        return None
    if got is None or len(got) != 2 or not all(isinstance(v, torch.fx.Node) for v in got.values()):
        return None
    return got["a"], got["b"]


def _silu_input(gm, node):
    """gate when the node is silu(gate), not in place, else None."""
    if _is_function(node, torch.nn.functional.silu):
        a = _call_args(node, ("input", "inplace"))
        gate = a and a.get("input")
        return gate if isinstance(gate, torch.fx.Node) and a.get("inplace", False) is False else None
    if node.op == "call_module":
        sub = gm.get_submodule(node.target)
        if type(sub) is torch.nn.SiLU and not sub.inplace and len(node.args) == 1 and not node.kwargs and isinstance(node.args[0], torch.fx.Node):
            return node.args[0]
    return None


def _gelu_input(gm, node):
    """(gate, approximate) when the node is gelu(gate, approximate) with approximate "none" or "tanh" (F.gelu,
    or an nn.GELU module), else None."""
    if _is_function(node, torch.nn.functional.gelu):
        a = _call_args(node, ("input", "approximate"))
        gate = a and a.get("input")
        how = a.get("approximate", "none") if a else None
        return (gate, how) if isinstance(gate, torch.fx.Node) and how in ("none", "tanh") else None
    if node.op == "call_module":
        sub = gm.get_submodule(node.target)
        if type(sub) is torch.nn.GELU and sub.approximate in ("none", "tanh") and len(node.args) == 1 and not node.kwargs \
                and isinstance(node.args[0], torch.fx.Node):
            return node.args[0], sub.approximate
    return None


def _match_gate_mul(gm, y):
    """act(gate) * up, either order, act SiLU or GELU: (nodes to remove, gate, up, GELU's approximate or None
    for SiLU), or None."""
    operands = _product_operands(y)
    if operands is None:
        return None
    for s, up in (operands, operands[::-1]):
        if not _single_use(s, y) or up is s:
            continue
        gate = _silu_input(gm, s)
        if gate is not None:
            return [s, y], gate, up, None
        gelu = _gelu_input(gm, s)
        if gelu is not None:
            return [s, y], gelu[0], up, gelu[1]
    return None


def _times_number(node, value):
    """x when the node is x times exactly the float `value`, in any spelling `_scaled` reads, else None."""
    got = _scaled(node)
    return got[0] if got is not None and type(got[1]) is float and got[1] == value else None


def _cube_of(node):
    """x when the node is x ** 3.0, x.pow(3.0) or torch.pow(x, 3.0) (the float exponent), else None."""
    got = _power(node)
    return got[0] if got is not None and type(got[1]) is float and got[1] == 3.0 else None


def _match_new_gelu(y):
    """0.5 * x * (1.0 + torch.tanh(sqrt(2 / pi) * (x + 0.044715 * torch.pow(x, 3.0)))) ending in product y, its
    numbers exactly those, sums and products either order: (nodes to remove, x, up) with up the other
    operand of the single product that uses y (T5 v1.1's gate) or None; None when it does not match."""
    operands = _product_operands(y)
    if operands is None:
        return None
    for h, u in (operands, operands[::-1]):
        x = _times_number(h, 0.5)
        plus = _plus_number(u)
        one = plus[0] if plus is not None and plus[1] == 1.0 else None
        if x is None or one is None or not _single_use(h, y) or not _single_use(u, y) or h is u:
            continue
        if not ((_is_function(one, torch.tanh) or _is_method(one, "tanh")) and len(one.args) == 1 and not one.kwargs and _single_use(one, u)):
            continue
        t = one.args[0]
        s = _times_number(t, _SQRT_2_OVER_PI) if isinstance(t, torch.fx.Node) and _single_use(t, one) else None
        terms = _sum_operands(s) if s is not None and _single_use(s, t) else None
        if terms is None:
            continue
        for xs, b in (terms, terms[::-1]):
            p = _times_number(b, 0.044715) if xs is x and _single_use(b, s) else None
            if p is None or not _single_use(p, b) or _cube_of(p) is not x:
                continue
            chain = [h, p, b, s, t, one, u, y]
            users = list(y.users)
            gate = _product_operands(users[0]) if len(users) == 1 else None
            if gate is not None and (gate[0] is y) != (gate[1] is y):
                return chain + [users[0]], x, gate[1] if gate[0] is y else gate[0]
            return chain, x, None
    return None


def _match_quick_gelu(y):
    """x * torch.sigmoid(1.702 * x) ending in product y (either order, the scale either side, exactly 1.702):
    (nodes to remove, x), or None."""
    operands = _product_operands(y)
    if operands is None:
        return None
    for x, s in (operands, operands[::-1]):
        if not ((_is_function(s, torch.sigmoid) or _is_method(s, "sigmoid")) and len(s.args) == 1 and not s.kwargs and _single_use(s, y)):
            continue
        a = s.args[0]
        if isinstance(a, torch.fx.Node) and _single_use(a, s) and _times_number(a, 1.702) is x:
            return [a, s, y], x
    return None


def _only_used_by(node, users):
    return len(node.users) > 0 and all(u in users for u in node.users)


def _match_rms_norm_cast(gm, y):
    """w * (xf * rsqrt(xf.pow(2).mean(-1, True) + eps)).to(x.dtype) with xf = x.float(), the products either
    way round: (nodes to remove, x, w, eps, the getattr that reads x's dtype), or None."""
    operands = _product_operands(y)
    if operands is None:
        return None
    for c, w in (operands, operands[::-1]):
        cast = _dtype_cast(c)
        if cast is None or not _single_use(c, y):
            continue
        xn, d = cast
        if not (isinstance(d, torch.fx.Node) and _is_function(d, getattr) and len(d.args) == 2 and d.args[1] == "dtype" and not d.kwargs):
            continue
        prod = _product_operands(xn) if isinstance(xn, torch.fx.Node) and _single_use(xn, c) else None
        if prod is None:
            continue
        for xf, r in (prod, prod[::-1]):
            x = _float32_upcast(xf)
            if x is None or d.args[0] is not x or not _single_use(r, xn):
                continue
            if not (_is_function(r, torch.rsqrt) and len(r.args) == 1 and not r.kwargs) and not (_is_method(r, "rsqrt") and len(r.args) == 1 and not r.kwargs):
                continue
            ve = r.args[0]
            if not isinstance(ve, torch.fx.Node) or not _single_use(ve, r):
                continue
            added = _plus_number(ve)
            if added is None:
                continue
            var, eps = added
            if not _single_use(var, ve):
                continue
            sq = _mean_last_kept(var)
            if sq is None or not _single_use(sq, var) or _squared(sq) is not xf:
                continue
            if not _only_used_by(xf, {sq, xn}) or w in (xf, sq, var, ve, r, xn, c):
                continue
            return [xf, sq, var, ve, r, xn, c, y], x, w, eps, d
    return None


def _match_rms_norm_offset(gm, y):
    """(xf * rsqrt(xf.pow(2).mean(-1, True) + eps) * (1.0 + w.float())).type_as(x) with xf = x.float(), Gemma's
    RMSNorm, the products either way round: (nodes to remove, x, w, eps, None), or None."""
    back = _cast_back_to(y, y.args[0] if _is_method(y, "type_as") and y.args else None)
    if back is None or back[1] is not None:
        return None
    o, x = y.args[0], back[0]
    operands = _product_operands(o) if isinstance(o, torch.fx.Node) and _single_use(o, y) else None
    if operands is None:
        return None
    for xn, w1 in (operands, operands[::-1]):
        summed = _add_operands(w1) if _single_use(w1, o) else None
        if summed is None:
            continue
        wf = summed[1] if _is_one(summed[0]) else summed[0] if _is_one(summed[1]) else None
        w = _float32_upcast(wf) if isinstance(wf, torch.fx.Node) and _single_use(wf, w1) else None
        prod = _product_operands(xn) if w is not None and _single_use(xn, o) else None
        if prod is None:
            continue
        for xf, r in (prod, prod[::-1]):
            if _float32_upcast(xf) is not x or not _single_use(r, xn):
                continue
            if not (_is_function(r, torch.rsqrt) and len(r.args) == 1 and not r.kwargs) and not (_is_method(r, "rsqrt") and len(r.args) == 1 and not r.kwargs):
                continue
            ve = r.args[0]
            added = _plus_number(ve) if isinstance(ve, torch.fx.Node) and _single_use(ve, r) else None
            if added is None:
                continue
            var, eps = added
            sq = _mean_last_kept(var) if _single_use(var, ve) else None
            if sq is None or not _single_use(sq, var) or _squared(sq) is not xf:
                continue
            if not _only_used_by(xf, {sq, xn}) or w in (xf, sq, var, ve, r, xn, wf, w1, o):
                continue
            return [xf, sq, var, ve, r, xn, wf, w1, o, y], x, w, eps, None
    return None


def _plus_number(node):
    """(v, eps) when the node is v + eps, eps a float written in the model (alpha absent or 1), else None."""
    got = _add_operands(node)
    if got is None:
        return None
    a, b = got
    if _is_function(node, operator.add) and isinstance(b, torch.fx.Node) and type(a) is float:
        return b, a  # eps + v, as an operator
    return (a, b) if isinstance(a, torch.fx.Node) and type(b) is float else None


def _mean_last_kept(node):
    """v when the node is v.mean(-1, keepdim=True) (dim -1, [-1] or (-1,)) with no dtype, else None."""
    if _is_method(node, "mean"):
        a = _call_args(node, ("self", "dim", "keepdim", "dtype"))
    elif _is_function(node, torch.mean):
        a = _call_args(node, ("input", "dim", "keepdim", "dtype"))
    else:
        return None
    if a is None:
        return None
    dim = a.get("dim")
    last = (type(dim) is int and dim == -1) or (isinstance(dim, (list, tuple)) and len(dim) == 1 and type(dim[0]) is int and dim[0] == -1)
    if not last or a.get("keepdim") is not True or a.get("dtype") is not None:
        return None
    v = a.get("input", a.get("self"))
    return v if isinstance(v, torch.fx.Node) else None


def _power(node):
    """(v, exponent) when the node is v ** e, v.pow(e) or torch.pow(v, e) with v a value of the graph, else None."""
    if _is_function(node, operator.pow) and len(node.args) == 2 and not node.kwargs:
        v, e = node.args
    elif _is_method(node, "pow"):
        a = _call_args(node, ("self", "exponent"))
        v, e = (a.get("self"), a.get("exponent")) if a else (None, None)
    elif _is_function(node, torch.pow):
        a = _call_args(node, ("input", "exponent"))
        v, e = (a.get("input"), a.get("exponent")) if a else (None, None)
    else:
        return None
    return (v, e) if isinstance(v, torch.fx.Node) else None


def _squared(node):
    """v when the node is v.pow(2) (or v ** 2, torch.pow(v, 2); 2 or 2.0), else None."""
    got = _power(node)
    return got[0] if got is not None and _is_number(got[1]) and got[1] == 2 else None


def _transposed_1_2(node):
    """x when the node is x.transpose(1, 2) (or 2, 1; torch.transpose), else None."""
    if _is_method(node, "transpose"):
        a = _call_args(node, ("self", "dim0", "dim1"))
    elif _is_function(node, torch.transpose):
        a = _call_args(node, ("input", "dim0", "dim1"))
    else:
        return None
    if a is None or {a.get("dim0"), a.get("dim1")} != {1, 2} or not all(type(a.get(k)) is int for k in ("dim0", "dim1")):
        return None
    x = a.get("input", a.get("self"))
    return x if isinstance(x, torch.fx.Node) else None


def _last_dim_slice(node):
    """(q, start, stop) when the node is q[..., start:stop] with step 1 (None where absent), else None."""
    if not (_is_function(node, operator.getitem) and len(node.args) == 2 and not node.kwargs):
        return None
    q, index = node.args
    if not isinstance(q, torch.fx.Node) or not isinstance(index, tuple) or len(index) != 2 or index[0] is not Ellipsis:
        return None
    sl = index[1]
    if not isinstance(sl, slice) or sl.step not in (None, 1):
        return None
    return q, sl.start, sl.stop


def _same_value(a, b):
    return a is b or (_is_number(a) and _is_number(b) and type(a) is int and type(b) is int and a == b)


def _half_of_last_dim(node, q):
    """The nodes, first to last, when the node computes q's last dimension // 2 (`q.shape[-1] // 2` or
    `q.size(-1) // 2`, as Hugging Face's rotate_half writes it), each used only by the next; else None."""
    if not (isinstance(node, torch.fx.Node) and _is_function(node, operator.floordiv) and len(node.args) == 2 and not node.kwargs
            and type(node.args[1]) is int and node.args[1] == 2 and isinstance(node.args[0], torch.fx.Node)):
        return None
    n = node.args[0]
    if _is_method(n, "size") and n.args == (q, -1) and not n.kwargs:
        nodes = [n]
    elif _is_function(n, operator.getitem) and len(n.args) == 2 and n.args[1] == -1 and isinstance(n.args[0], torch.fx.Node):
        shape = n.args[0]
        whole = (_is_function(shape, getattr) and shape.args == (q, "shape")) or (_is_method(shape, "size") and shape.args == (q,))
        if not whole or shape.kwargs or not _single_use(shape, n):
            return None
        nodes = [shape, n]
    else:
        return None
    return nodes + [node] if _single_use(n, node) else None


def _rotated_half(cat):
    """(q, half, nodes) when the node is torch.cat((-q[..., half:], q[..., :half]), -1), else None."""
    if not _is_function(cat, torch.cat):
        return None
    a = _call_args(cat, ("tensors", "dim"))
    if a is None or type(a.get("dim")) is not int or a.get("dim") != -1:
        return None
    parts = a.get("tensors")
    if not isinstance(parts, (list, tuple)) or len(parts) != 2 or not all(isinstance(p, torch.fx.Node) for p in parts):
        return None
    neg, front = parts
    if not (_is_function(neg, operator.neg) and len(neg.args) == 1 and not neg.kwargs) and not (_is_method(neg, "neg") and len(neg.args) == 1 and not neg.kwargs):
        return None
    back = neg.args[0]
    b, f = _last_dim_slice(back) if isinstance(back, torch.fx.Node) else None, _last_dim_slice(front)
    if b is None or f is None or b[0] is not f[0] or b[2] is not None or f[1] not in (None, 0):
        return None
    if not (_single_use(neg, cat) and _single_use(front, cat) and _single_use(back, neg)):
        return None
    q = b[0]
    if _same_value(b[1], f[2]):
        return q, b[1], [back, front, neg, cat], []
    # Each slice computing q's half itself: the first computation is kept (re-pointed at x, whose last
    # dimension is q's), the other dropped.
    kept, dropped = _half_of_last_dim(b[1], q), _half_of_last_dim(f[2], q)
    if kept is None or dropped is None or not _single_use(b[1], back) or not _single_use(f[2], front):
        return None
    return q, b[1], [back, front, neg, cat], (kept, dropped)


def _match_rotary(y):
    """q * cos + rotate_half(q) * sin with q = x.transpose(1, 2), products and sum either way round:
    (nodes to remove, x, cos, sin, half, the node reading q's shape for half or None, False), or None. Where
    q is not such a transpose used only by the chain (Gemma 3 normalizes q per head first), q itself stays:
    (nodes to remove, q, cos, sin, half, None, True)."""
    operands = _sum_operands(y)
    if operands is None:
        return None
    for a, b in (operands, operands[::-1]):
        pa, pb = _product_operands(a), _product_operands(b)
        if pa is None or pb is None or not _single_use(a, y) or not _single_use(b, y) or a is b:
            continue
        for cat, sin in (pb, pb[::-1]):
            rotated = _rotated_half(cat)
            if rotated is None or not _single_use(cat, b):
                continue
            q, half, nodes, computed = rotated
            for q2, cos in (pa, pa[::-1]):
                if q2 is not q or cos is q or sin is q:
                    continue
                x = _transposed_1_2(q)
                kept, dropped = computed if computed else ([None], [])
                if x is None or not _only_used_by(q, {a, nodes[0], nodes[1]} | ({computed[0][0], computed[1][0]} if computed else set())):
                    return dropped + nodes + [b, a, y], q, cos, sin, half, None, True
                # The half computation kept reads q's shape; the pass re-points it at x (whose last dimension
                # is q's) before q goes, and the other computation goes with the chain.
                return [q] + dropped + nodes + [b, a, y], x, cos, sin, half, kept[0], False
    return None


def _residual_before(graph, found):
    """(a, b) when the RMSNorm chain `found` normalizes h = a + b (alpha absent or 1, two values of the graph)
    and every other use of h comes after the chain's end (h is then taken from the fused call), else None."""
    chain, x, w, eps, dtype_read = found
    operands = _sum_operands(x)
    if operands is None or w is x:
        return None
    order = {n: i for i, n in enumerate(graph.nodes)}
    end = order[chain[-1]]
    if any(u not in chain and u is not dtype_read and order[u] < end for u in x.users):
        return None
    return operands


# --- the pass ------------------------------------------------------------------------------------------


def _match(gm, p):
    """The chain ending in softmax node p, as (nodes to remove in order, x, scale, mask or None, final cast), or None."""
    u = _softmax_input(gm, p)
    if u is not None:  # softmax(t.float(), -1)
        t, upcast = _float32_upcast(u), [u]
        if not _single_use(u, p):
            return None
    else:  # softmax(t, -1, dtype=torch.float32), which converts t first
        t, upcast = _softmax_input(gm, p, _F32), []
    if t is None or not _single_use(t, (upcast or [p])[0]) or len(p.users) != 1:
        return None
    y = next(iter(p.users))
    chain, mask = [t], None
    scaled = _scaled(t)
    if scaled is None:
        operands = _sum_operands(t)
        if operands is None:
            return None
        for s, m in (operands, operands[::-1]):
            if _single_use(s, t) and _scaled(s) is not None and s is not m:
                chain, mask, scaled = [s, t], m, _scaled(s)
                break
        else:
            # No scale (CLIP, Swin and Whisper scale q before the product, T5 not at all): x the first operand.
            if operands[0] is operands[1]:
                return None
            scaled, mask = (operands[0], None), operands[1]
    x, scale = scaled
    back = _cast_back_to(y, p)
    if back is None or not _has_dtype_of(back[0], x):
        return None
    dtype_read = back[1]
    return chain + upcast + [p, y], x, scale, mask, dtype_read


def _match_native(gm, p):
    """The chain softmax(x * scale [+ mask], -1) or softmax(x / scale [+ mask], -1) ending in softmax node p,
    with no casts (a model that computes in one dtype), as (nodes to remove in order, x, scale, mask or None,
    whether it divides), or None."""
    u = _softmax_input(gm, p)
    if u is None or not _single_use(u, p):
        return None

    def scaled(n):
        got = _scaled(n)
        if got is not None:
            return got + (False,)
        got = _divided(n)
        return None if got is None else got + (True,)

    found = scaled(u)
    if found is not None:
        return [u, p], found[0], found[1], None, found[2]
    operands = _sum_operands(u)
    if operands is None:
        return None
    for s, m in (operands, operands[::-1]):
        found = scaled(s) if _single_use(s, u) and s is not m else None
        if found is not None:
            return [s, u, p], found[0], found[1], m, found[2]
    # No scale: x the first operand, the scale None.
    return ([u, p], operands[0], None, operands[1], False) if operands[0] is not operands[1] else None


def _match_native_view(gm, p):
    """softmax((x + mask).view(size), -1) ending in softmax node p, as (nodes to remove in order, x, mask,
    size), or None: the view written t.view(a, b, c) or t.view((a, b, c)), its sizes values of the graph."""
    u = _softmax_input(gm, p)
    if u is None or not _single_use(u, p) or not _is_method(u, "view") or u.kwargs or len(u.args) < 2:
        return None
    t = u.args[0]
    size = tuple(u.args[1]) if len(u.args) == 2 and isinstance(u.args[1], (tuple, list)) else tuple(u.args[1:])
    operands = _sum_operands(t) if isinstance(t, torch.fx.Node) else None
    if operands is None or not _single_use(t, u) or operands[0] is operands[1]:
        return None
    return [t, u, p], operands[0], operands[1], size


def rewrite_fused_patterns(module, concrete_args=None):
    """Replace each exact fused chain of `module` by kforge's operator for it.

    module: an nn.Module, traced with torch.fx.symbolic_trace (the module itself is not changed; the result
    shares its parameters and buffers), or a torch.fx.GraphModule, rewritten in place. concrete_args is
    passed to symbolic_trace. Returns (graph_module, count), count the chains replaced. Needs the kforge
    operators: torch.ops.load_library(libkforge_runtime.so) first. The pointwise chains (silu_mul,
    rms_norm_cast), the residual add before an RMSNorm and the rotary embedding are rewritten where the
    runtime registers their operators.
    """
    plain_op, masked_op = _ops()
    silu_mul_op, rms_op = _optional_op("silu_mul"), _optional_op("rms_norm_cast")
    gelu_ops = {"tanh": _optional_op("gelu_tanh_mul"), "none": _optional_op("gelu_mul")}
    offset_op, add_offset_op = _optional_op("rms_norm_offset"), _optional_op("add_rms_norm_offset")
    offset_heads_op = _optional_op("rms_norm_offset_heads")
    rotary_op = _optional_op("rotary_embedding")
    gelu_new_op, gelu_new_mul_op = _optional_op("gelu_new"), _optional_op("gelu_new_mul")
    quick_gelu_op = _optional_op("quick_gelu")
    add_rms_op = _optional_op("add_rms_norm_cast")
    native_ops = _optional_op("scaled_softmax_native") is not None and _optional_op("scaled_masked_softmax_native") is not None
    div_ops = _optional_op("scaled_softmax_native_div") is not None and _optional_op("scaled_masked_softmax_native_div") is not None
    view_op = native_ops and _optional_op("masked_softmax_native_view") is not None
    gm = module if isinstance(module, torch.fx.GraphModule) else torch.fx.symbolic_trace(module, concrete_args=concrete_args)
    graph = gm.graph
    erased = set()

    def replace(chain, target, args, extra=(), output=None):
        """The chain's last node's uses go to the fused call (its `output`-th result, for an operator with
        several); the chain and the unused `extra` nodes are erased. Returns the fused call."""
        y = chain[-1]
        with graph.inserting_before(y):
            fused = graph.call_function(target, args)
            result = fused if output is None else graph.call_function(operator.getitem, (fused, output))
        y.replace_all_uses_with(result)
        for n in reversed(chain):
            graph.erase_node(n)
            erased.add(n)
        for n in extra:  # the getattr that read a dtype, where nothing else reads it
            if not n.users:
                graph.erase_node(n)
                erased.add(n)
        return fused

    count = 0
    for node in list(graph.nodes):
        if node in erased:
            continue
        found = _match(gm, node)
        if found is not None:
            chain, x, scale, mask, dtype_read = found
            if scale is None:
                replace(chain, _masked_softmax_checked, (x, mask), [dtype_read] if dtype_read is not None else [])
            elif mask is None:
                replace(chain, plain_op, (x, scale), [dtype_read] if dtype_read is not None else [])
            else:
                replace(chain, masked_op if _tensor_attr(gm, mask) else _scaled_masked_softmax_checked, (x, scale, mask),
                        [dtype_read] if dtype_read is not None else [])
            count += 1
            continue
        found = _match_native_view(gm, node) if view_op else None
        if found is not None:
            chain, x, mask, size = found
            replace(chain, _masked_softmax_native_view_checked, (x, mask, size))
            count += 1
            continue
        found = _match_native(gm, node) if native_ops else None
        if found is not None and not (found[4] and not div_ops):
            chain, x, scale, mask, divide = found
            if scale is None:
                replace(chain, _masked_softmax_native_checked, (x, mask))
            elif mask is None:
                replace(chain, _scaled_softmax_native_div_checked if divide else _scaled_softmax_native_checked, (x, scale))
            else:
                replace(chain, _scaled_masked_softmax_native_div_checked if divide else _scaled_masked_softmax_native_checked, (x, scale, mask))
            count += 1
            continue
        found, offset = _match_rms_norm_cast(gm, node) if rms_op is not None else None, False
        if found is None and offset_op is not None:
            found, offset = _match_rms_norm_offset(gm, node), True
        added = _residual_before(graph, found) if found is not None and (add_offset_op if offset else add_rms_op) is not None else None
        if added is not None:
            chain, x, w, eps, dtype_read = found
            # a and b are any values of the graph: the call checks they are tensors. h, the sum, is the
            # fused call's first result for its other uses.
            fused = replace(chain, _add_rms_norm_offset_checked if offset else _add_rms_norm_cast_checked, added + (w, eps),
                            [dtype_read] if dtype_read is not None else [], output=1)
            with graph.inserting_after(fused):
                h = graph.call_function(operator.getitem, (fused, 0))
            x.replace_all_uses_with(h)
            graph.erase_node(x)
            erased.add(x)
            count += 1
            continue
        if found is not None and offset:
            chain, x, w, eps, _ = found
            if _transposed_1_2(x) is not None and offset_heads_op is not None and _tensor_attr(gm, w):
                replace(chain, offset_heads_op, (x, w, eps))  # Gemma 3's q and k per head on the transposed view
            else:
                replace(chain, offset_op if _tensor_attr(gm, w) else _rms_norm_offset_checked, (x, w, eps))
            count += 1
            continue
        if found is not None:
            chain, x, w, eps, dtype_read = found
            replace(chain, rms_op if _tensor_attr(gm, w) else _rms_norm_cast_checked, (x, w, eps), [dtype_read])
            count += 1
            continue
        found = _match_rotary(node) if rotary_op is not None else None
        if found is not None:
            chain, x, cos, sin, half, reads_q, heads = found
            if heads:
                replace(chain, _rotary_heads_checked, (x, cos, sin, half))
                count += 1
                continue
            if reads_q is not None:
                reads_q.replace_input_with(chain[0], x)
            both = _tensor_attr(gm, cos) and _tensor_attr(gm, sin)
            replace(chain, rotary_op if both else _rotary_checked, (x, cos, sin, half))
            count += 1
            continue
        found = _match_new_gelu(node) if gelu_new_op is not None and gelu_new_mul_op is not None else None
        if found is not None:
            chain, x, up = found
            if up is None:
                replace(chain, gelu_new_op, (x,))
            else:
                replace(chain, gelu_new_mul_op if _tensor_attr(gm, up) else _gelu_new_mul_checked, (x, up))
            count += 1
            continue
        found = _match_quick_gelu(node) if quick_gelu_op is not None else None
        if found is not None:
            replace(found[0], quick_gelu_op, (found[1],))
            count += 1
            continue
        found = _match_gate_mul(gm, node)
        if found is not None and found[3] is None and silu_mul_op is not None:
            chain, gate, up, _ = found
            replace(chain, silu_mul_op if _tensor_attr(gm, up) else _silu_mul_checked, (gate, up))
            count += 1
        elif found is not None and found[3] is not None and gelu_ops[found[3]] is not None:
            chain, gate, up, how = found
            replace(chain, gelu_ops[how] if _tensor_attr(gm, up) else _GELU_CHECKED[how], (gate, up))
            count += 1
    graph.lint()
    gm.recompile()
    return gm, count


def fused_calls(gm):
    """How many calls of each kforge fused operator the GraphModule's graph makes, by operator name
    ("kforge::scaled_masked_softmax": 1, ...); a call checked when it runs counts as its operator's."""
    names = {_scaled_masked_softmax_checked: "kforge::scaled_masked_softmax", _silu_mul_checked: "kforge::silu_mul",
             _rms_norm_cast_checked: "kforge::rms_norm_cast", _rotary_checked: "kforge::rotary_embedding", _rotary_heads_checked: "kforge::rotary_embedding",
             _add_rms_norm_cast_checked: "kforge::add_rms_norm_cast", _scaled_softmax_native_checked: "kforge::scaled_softmax_native",
             _scaled_masked_softmax_native_checked: "kforge::scaled_masked_softmax_native",
             _scaled_softmax_native_div_checked: "kforge::scaled_softmax_native_div",
             _scaled_masked_softmax_native_div_checked: "kforge::scaled_masked_softmax_native_div",
             _masked_softmax_checked: "kforge::scaled_masked_softmax", _masked_softmax_native_checked: "kforge::scaled_masked_softmax_native",
             _masked_softmax_native_view_checked: "kforge::masked_softmax_native_view",
             _rms_norm_offset_checked: "kforge::rms_norm_offset", _gelu_tanh_mul_checked: "kforge::gelu_tanh_mul",
             _gelu_mul_checked: "kforge::gelu_mul", _add_rms_norm_offset_checked: "kforge::add_rms_norm_offset",
             _gelu_new_mul_checked: "kforge::gelu_new_mul"}
    for name in ("scaled_softmax", "scaled_masked_softmax", "silu_mul", "rms_norm_cast", "rotary_embedding", "add_rms_norm_cast",
                 "scaled_softmax_native", "scaled_masked_softmax_native", "scaled_softmax_native_div", "scaled_masked_softmax_native_div",
                 "masked_softmax_native_view", "gelu_tanh_mul", "gelu_mul", "rms_norm_offset", "add_rms_norm_offset", "gelu_new", "gelu_new_mul", "rms_norm_offset_heads", "quick_gelu"):
        op = _optional_op(name)
        if op is not None:
            names[op] = "kforge::" + name
    out = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target in names:
            out[names[n.target]] = out.get(names[n.target], 0) + 1
    return out


def rewrite_traced(model, example_inputs):
    """The TorchScript route for a model FX cannot trace (a forward that unpacks a shape, as Hugging Face's
    modules do): `model` traced with torch.jit.trace on `example_inputs` (a tuple), rewritten by the
    runtime's TorchScript rewrite (the C++ patterns, the same meanings as this pass) and loaded back.
    Returns (traced, rewritten, count): the plain trace, the rewritten one and the chains it runs fused. The
    trace holds the sizes and constants of `example_inputs`, as any trace does. Needs the kforge operators:
    torch.ops.load_library(libkforge_runtime.so) first."""
    import os
    import tempfile
    if _optional_op("rewrite_fused_file") is None:
        raise RuntimeError("kforge's operators are not loaded: call torch.ops.load_library(libkforge_runtime.so) first")
    with torch.no_grad():
        traced = torch.jit.trace(model, example_inputs, check_trace=False)
    with tempfile.TemporaryDirectory() as d:
        source, target = os.path.join(d, "traced.pt"), os.path.join(d, "rewritten.pt")
        traced.save(source)
        count = torch.ops.kforge.rewrite_fused_file(source, target)
        rewritten = torch.jit.load(target, map_location=next(iter(t.device for t in example_inputs if isinstance(t, torch.Tensor)), None))
    return traced, rewritten, count


def load_pack(model, pack_dir, runtime_lib):
    """Load kforge's runtime library and the pack, and return `model` rewritten to call the fused operators.

    The returned GraphModule's `kforge_fused_chains` says how many chains were rewritten, and
    `kforge_pack_summary` what the runtime said of the pack. The pack stays registered for the process
    (torch.ops.kforge.unload_packs() removes it)."""
    torch.ops.load_library(runtime_lib)
    gm, count = rewrite_fused_patterns(model)
    summary = torch.ops.kforge.load_pack(pack_dir)
    gm.kforge_fused_chains = count
    gm.kforge_pack_summary = summary
    return gm
