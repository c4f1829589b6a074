"""The FX pass: an eager PyTorch model's attention-softmax chains rewritten to kforge's fused operators.

    import torch, kforge_fx
    torch.ops.load_library("libkforge_runtime.so")
    module, n = kforge_fx.rewrite_fused_patterns(model)      # n chains now call torch.ops.kforge.*
    torch.ops.kforge.load_pack("my-pack")                     # the pack's kernels stand in front of them
    # or, in one call:  module = kforge_fx.load_pack(model, "my-pack", "libkforge_runtime.so")

The Python half of runtime::rewriteFusedPatterns (runtime/fused_ops.cpp), with the same exactness rules.
It replaces, found by data flow in the torch.fx graph and in no other case,

    softmax((x * scale).float(), -1).to(x.dtype)            by torch.ops.kforge.scaled_softmax(x, scale)
    softmax((x * scale + mask).float(), -1).to(x.dtype)     by torch.ops.kforge.scaled_masked_softmax(x, scale, mask)

Each operator's own implementation is that chain, so the rewritten module computes bit for bit what the model
did; with a pack loaded, a kernel for the operator takes the call where its guard covers it.

A match must be, as in the C++ filter: a scale that is a number written in the model (not a tensor, not a
value computed while tracing; a bool is not a number here), an upcast to float32 that neither copies nor
changes the memory format, a softmax over dim -1 with no dtype of its own, an add whose alpha is 1, and a
cast back to x's own dtype read from the graph: `x.dtype`, or the dtype of an input of the matmul that
produced x (`torch.matmul(q, k.transpose(-2, -1)) * c ... .to(q.dtype)`; matmul does not promote, so q's
dtype is x's). The chain's intermediate values must have no other use. Anything else, e.g. a softmax over
dim 1, a dtype argument, a tensor scale, a division by the scale, a cast to a constant dtype (torch.bfloat16:
the graph does not say it is x's) or no cast back, is left as the model wrote it.

The spellings accepted are those whose meaning is the chain's:
    scale        x * c, c * x (Python operators), torch.mul(x, c), x.mul(c)
    mask         s + m, m + s, torch.add(s, m), torch.add(m, s), s.add(m), m.add(s) (alpha absent or 1)
    upcast       t.float(), t.to(torch.float32) (torch.float is torch.float32), t.to(dtype=torch.float32),
                 with non_blocking/copy False and memory_format torch.preserve_format where given
    softmax      torch.softmax(u, -1), torch.nn.functional.softmax(u, dim=-1), u.softmax(-1), an
                 nn.Softmax(dim=-1) submodule (its class exactly), dim given by position or name
    cast back    p.to(D), p.to(dtype=D) with D = x.dtype or q.dtype as above; p.type_as(x) or p.type_as(q)
                 (type_as is .to(other's dtype and device); x, q and the scores share one device)
Addition and multiplication commute exactly in IEEE arithmetic and promote their operands alike, so the
swapped operand orders are the same values. The mask is a tensor of the graph: a buffer or parameter
(get_attr), or any other value of the graph, which is checked to be a tensor when the call runs (a Python
number there takes the chain as written).

Works with torch 1.13 and 2.x (torch.fx.symbolic_trace). A model that does not trace symbolically (control
flow on tensor values) is refused with torch.fx's own reason.
"""

import operator

import torch
import torch.fx

__all__ = ["rewrite_fused_patterns", "load_pack"]

_F32 = torch.float32
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


def _softmax_input(gm, node):
    """u when the node is a softmax of u over dim -1 with no dtype, else None."""
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
    if type(dim) is not int or dim != -1 or a.get("dtype") is not None:
        return None
    return source if isinstance(source, torch.fx.Node) else None


def _scaled(node):
    """(x, scale) when the node is x times a number, else None."""
    if _is_function(node, operator.mul):
        a, b = node.args if len(node.args) == 2 and not node.kwargs else (None, None)
        if isinstance(a, torch.fx.Node) and _is_number(b):
            return a, b
        if isinstance(b, torch.fx.Node) and _is_number(a):
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
    return (x, a["other"]) if isinstance(x, torch.fx.Node) and _is_number(a["other"]) else None


def _sum_operands(node):
    """(a, b) when the node is a + b (alpha absent or 1) of two values of the graph, else None."""
    if _is_function(node, operator.add):
        if len(node.args) != 2 or node.kwargs:
            return None
        a, b = node.args
    else:
        if _is_function(node, torch.add):
            got = _call_args(node, ("input", "other"), ("alpha",))
        elif _is_method(node, "add"):
            got = _call_args(node, ("self", "other"), ("alpha",))
        else:
            return None
        if got is None or "other" not in got or not _is_one(got.get("alpha", 1)):
            return None
        a, b = got.get("input", got.get("self")), got["other"]
    return (a, b) if isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node) else None


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


# --- the pass ------------------------------------------------------------------------------------------


def _match(gm, p):
    """The chain ending in softmax node p, as (nodes to remove in order, x, scale, mask or None, final cast), or None."""
    u = _softmax_input(gm, p)
    if u is None or not _single_use(u, p) or len(p.users) != 1:
        return None
    y = next(iter(p.users))
    t = _float32_upcast(u)
    if t is None or not _single_use(t, u):
        return None
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
            return None
    x, scale = scaled
    back = _cast_back_to(y, p)
    if back is None or not _has_dtype_of(back[0], x):
        return None
    dtype_read = back[1]
    return chain + [u, p, y], x, scale, mask, dtype_read


def rewrite_fused_patterns(module, concrete_args=None):
    """Replace each exact attention-softmax chain of `module` by kforge's fused operator.

    module: an nn.Module, traced with torch.fx.symbolic_trace (the module itself is not changed; the result
    shares its parameters and buffers), or a torch.fx.GraphModule, rewritten in place. concrete_args is
    passed to symbolic_trace. Returns (graph_module, count), count the chains replaced. Needs the kforge
    operators: torch.ops.load_library(libkforge_runtime.so) first.
    """
    plain_op, masked_op = _ops()
    gm = module if isinstance(module, torch.fx.GraphModule) else torch.fx.symbolic_trace(module, concrete_args=concrete_args)
    graph = gm.graph
    count = 0
    for p in list(graph.nodes):
        if p.graph is not graph:  # already erased as part of an earlier chain
            continue
        found = _match(gm, p)
        if found is None:
            continue
        chain, x, scale, mask, dtype_read = found
        y = chain[-1]
        with graph.inserting_before(y):
            if mask is None:
                fused = graph.call_function(plain_op, (x, scale))
            elif _tensor_attr(gm, mask):
                fused = graph.call_function(masked_op, (x, scale, mask))
            else:
                fused = graph.call_function(_scaled_masked_softmax_checked, (x, scale, mask))
        y.replace_all_uses_with(fused)
        for n in reversed(chain):
            graph.erase_node(n)
        if dtype_read is not None and not dtype_read.users:
            graph.erase_node(dtype_read)
        count += 1
    graph.lint()
    gm.recompile()
    return gm, count


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
