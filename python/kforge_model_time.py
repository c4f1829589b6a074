#!/usr/bin/env python3
"""Time a built-in model's or an imported problem's workload eager, eager with a kforge kernel pack, and under torch.compile, in one process.

    python3 kforge_model_time.py WORKLOAD.json [--pack DIR --runtime libkforge_runtime.so [--no-fx]] [--device cpu|cuda]
                                 [--iters N] [--no-compile] [--out RESULT.json]

The workload must come from `kforge-cli model NAME` (or `profile builtin:NAME`): its file carries the model's
methods as TorchScript source, which is Python, so the model is rebuilt here as an eager nn.Module with the
weights of its .pt file; or from `kforge-cli import`: its file carries the problem's Python source, whose Model
is built here (get_init_inputs) and given the traced module's parameters and buffers by name. Either is
checked against the TorchScript module on the same inputs first. The variants
are then timed interleaved, round by round (CUDA events on the GPU), after a warm-up of each; medians and
spreads are reported. The pack is loaded through torch.ops.load_library and registered only around its
runs, so its rounds and the others see the same process; after each load one untimed forward loads its
kernels onto the device (a once-per-process cost), and the next is timed. "eager with the pack" runs the eager module
rewritten by kforge_fx (the FX pass: each exact attention-softmax chain calls kforge's fused operator, whose kernel the
pack may hold; "fused_chains" says how many, "fused_calls" of which operators), checked first to compute bit for bit what the eager module computes
without the pack; --no-fx runs the eager module as written instead (only one-for-one kernels apply). A model FX cannot
trace (a forward that unpacks a shape) takes the TorchScript route: traced, rewritten by the runtime's TorchScript
rewrite (kforge_fx.rewrite_traced), checked bit for bit against its plain trace, and both timed unoptimized ("traced"
and "eager_pack"; "torchscript_route" says so). torch.compile
needs PyTorch 2.0 or later; where it is missing, or fails, the result says why and the other figures stand.

Writes {"eager": {...}, "eager_pack": {...}, "compile": {...}, "torchscript_max_diff": ..., "fused_chains": ..., ...}.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
import types


def _fail(out, why):
    text = json.dumps({"ok": False, "why": why})
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 1


def _torch_namespace(torch, source):
    """The names `torch.X` the source uses, resolved once: TorchScript's torch namespace also holds
    functions Python keeps in torch.nn.functional (linear, silu, adaptive_avg_pool2d)."""
    import torch.nn.functional as F

    names = {}
    for name in sorted(set(re.findall(r"\btorch\.([A-Za-z_][A-Za-z_0-9]*)", source))):
        fn = getattr(torch, name, None)
        if fn is None:
            fn = getattr(F, name, None)
        if fn is None:
            raise ValueError("the model's source calls torch.%s, which neither torch nor torch.nn.functional has" % name)
        names[name] = fn
    # dtypes and the like the source may name (torch.float32) resolve the same way
    return types.SimpleNamespace(**names)


def build_eager(torch, scripted, source):
    """An nn.Module whose methods are the source's functions and whose parameters and buffers are the
    scripted module's tensors (shared, not copied)."""
    namespace = {"torch": _torch_namespace(torch, source), "math": math}
    exec(compile(source, "<built-in model source>", "exec"), namespace)
    methods = {k: v for k, v in namespace.items() if isinstance(v, types.FunctionType)}
    if "forward" not in methods:
        raise ValueError("the model's source defines no forward")
    cls = type("KforgeBuiltinModel", (torch.nn.Module,), methods)
    module = cls()
    for name, p in scripted.named_parameters(recurse=False):
        module.register_parameter(name, torch.nn.Parameter(p.detach(), requires_grad=False))
    for name, b in scripted.named_buffers(recurse=False):
        module.register_buffer(name, b.detach())
    return module.eval()


def build_problem(torch, scripted, source, device):
    """An imported problem's Model (a KernelBench-style file: Model, get_init_inputs), built from the source
    the workload carries, holding the traced module's parameters and buffers (loaded by name)."""
    namespace = {"__name__": "kforge_problem"}
    exec(compile(source, "<imported problem source>", "exec"), namespace)
    if "Model" not in namespace:
        raise ValueError("the problem's source defines no Model")
    init = namespace["get_init_inputs"]() if "get_init_inputs" in namespace else []
    module = namespace["Model"](*init)
    # The trace also holds the Model's non-persistent buffers, which the Model computes itself.
    expected = module.state_dict()
    module.load_state_dict({k: v for k, v in scripted.state_dict().items() if k in expected}, strict=True)
    return module.to(device).eval()


def make_inputs(torch, workload, device, workload_dir="."):
    spec = workload.get("inputs", {})
    if spec.get("captured"):
        # The inputs kforge-cli import saved: buffers i0, i1, ... of a TorchScript module.
        held = dict(torch.jit.load(os.path.join(workload_dir, spec["captured"]), map_location=device).named_buffers())
        return [held["i%d" % i] for i in range(len(held))]
    torch.manual_seed(int(spec.get("seed", 0)))
    out = []
    for t in spec.get("tensors", []):
        shape, dtype, init = t["shape"], getattr(torch, t.get("dtype", "float32")), t.get("init", "randn")
        if init == "randn":
            x = torch.randn(shape)
        elif init == "rand":
            x = torch.rand(shape)
        elif init == "zeros":
            x = torch.zeros(shape)
        elif init == "ones":
            x = torch.ones(shape)
        elif init.startswith("randint:"):
            lo, hi = (int(v) for v in init.split(":")[1:3])
            x = torch.randint(lo, hi, shape)
            out.append(x.to(device))
            continue
        else:
            raise ValueError("input init '%s' is not one this helper makes" % init)
        out.append(x.to(device=device, dtype=dtype))
    return out


def _kforge_fx():
    sys.dont_write_bytecode = True  # no __pycache__ beside the script
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import kforge_fx
    return kforge_fx


def _fx_rewrite(module):
    kforge_fx = _kforge_fx()
    gm, count = kforge_fx.rewrite_fused_patterns(module)
    return gm, count, kforge_fx.fused_calls(gm)


def _traced_rewrite(module, inputs):
    """(plain trace, rewritten trace, chains, fused calls) by the TorchScript route, both run unoptimized: the
    graph executor's fusers would fuse pointwise chains themselves and time something other than eager."""
    import torch

    traced, rewritten, count = _kforge_fx().rewrite_traced(module, tuple(inputs))

    def unoptimized(m):
        def run(*args):
            with torch.jit.optimized_execution(False):
                return m(*args)
        return run

    calls = {}
    for node in rewritten.inlined_graph.nodes():
        if node.kind().startswith("kforge::"):
            calls[node.kind()] = calls.get(node.kind(), 0) + 1
    return unoptimized(traced), unoptimized(rewritten), count, calls


def _summary(samples):
    s = sorted(samples)
    return {"median_ms": statistics.median(s), "min_ms": s[0], "max_ms": s[-1], "samples_ms": samples}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload")
    p.add_argument("--pack")
    p.add_argument("--runtime", help="libkforge_runtime.so (needed with --pack)")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--no-fx", action="store_true", help="run the pack with the eager module as written, not FX-rewritten")
    p.add_argument("--out")
    args = p.parse_args(argv)
    if args.pack and not args.runtime:
        return _fail(args.out, "--pack needs --runtime, the path of libkforge_runtime.so")
    try:
        import torch
    except ImportError as e:
        return _fail(args.out, "this Python has no torch (%s)" % e)
    try:
        with open(args.workload) as f:
            workload = json.load(f)
        model = workload["model"]
        problem_source = workload.get("problem_source")
        if model.get("kind") != "torchscript" or not (model.get("source") or problem_source):
            return _fail(args.out, "%s carries no model source: a built-in model's workload (kforge-cli model NAME) or an "
                         "imported problem's (kforge-cli import) does" % args.workload)
        pt = os.path.join(os.path.dirname(os.path.abspath(args.workload)), model["path"])
        if args.device == "cuda" and not torch.cuda.is_available():
            return _fail(args.out, "this Python's torch %s sees no CUDA device" % torch.__version__)
        scripted = torch.jit.load(pt, map_location=args.device).eval()
        eager = build_eager(torch, scripted, model["source"]) if model.get("source") else build_problem(torch, scripted, problem_source, args.device)
        inputs = make_inputs(torch, workload, args.device, os.path.dirname(os.path.abspath(args.workload)))
    except Exception as e:
        return _fail(args.out, "the model did not build: %s: %s" % (type(e).__name__, e))

    def sync():
        if args.device == "cuda":
            torch.cuda.synchronize()

    def timed(fn):
        if args.device == "cuda":
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*inputs)
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        t0 = time.perf_counter()
        fn(*inputs)
        return (time.perf_counter() - t0) * 1e3

    result = {"ok": True, "torch": torch.__version__, "device": args.device, "iters": args.iters, "workload": args.workload}
    with torch.no_grad():
        a = eager(*inputs)
        with torch.jit.optimized_execution(False):  # the calls as written, as the eager module makes them
            b = scripted(*inputs)
        diff = (a.double() - b.double()).abs().max().item()
        scale = b.double().abs().max().item()
        result["torchscript_max_diff"] = diff
        result["torchscript_max_abs"] = scale
        # The same calls in the same order: only a different model (a source that does not match the .pt)
        # differs by more than rounding.
        if diff > 1e-2 * max(1.0, scale):
            return _fail(args.out, "the eager rebuild differs from the TorchScript module by %g (outputs up to %g)" % (diff, scale))

        variants = [("eager", eager)]
        load = unload = None
        if args.pack:
            try:
                torch.ops.load_library(args.runtime)
                result["pack_summary"] = torch.ops.kforge.load_pack(os.path.abspath(args.pack))
                torch.ops.kforge.unload_packs()
            except Exception as e:
                return _fail(args.out, "the pack did not load: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
            pack_dir = os.path.abspath(args.pack)
            load = lambda: torch.ops.kforge.load_pack(pack_dir)
            unload = torch.ops.kforge.unload_packs
            with_pack = eager
            if args.no_fx:
                result["fx"] = {"used": False, "why": "--no-fx"}
            else:
                try:
                    with_pack, result["fused_chains"], result["fused_calls"] = _fx_rewrite(eager)
                    result["fx"] = {"used": True}
                except Exception as e:  # a model FX cannot trace: the TorchScript route below
                    result["fx"] = {"used": False, "why": "the FX pass failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
                if result["fx"]["used"]:
                    # Without the pack the operators' own implementation is the chain: the same bits, or a bug.
                    if not torch.equal(with_pack(*inputs), a):
                        return _fail(args.out, "the FX-rewritten module does not compute what the eager module computes")
            if not args.no_fx and not result["fx"]["used"]:
                # Traced, rewritten by the runtime's TorchScript rewrite, and timed beside its own plain trace
                # (both unoptimized), so the pack's gain is not the interpreter's difference from eager.
                try:
                    traced, with_pack, result["fused_chains"], result["fused_calls"] = _traced_rewrite(eager, inputs)
                    result["torchscript_route"] = {"used": True}
                    if not torch.equal(with_pack(*inputs), traced(*inputs)):
                        return _fail(args.out, "the rewritten trace does not compute what the plain trace computes")
                    variants.append(("traced", traced))
                except Exception as e:
                    result["torchscript_route"] = {"used": False, "why": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
            variants.append(("eager_pack", with_pack))
        compiled = None
        if not args.no_compile:
            if not hasattr(torch, "compile"):
                result["compile"] = {"available": False, "why": "torch.compile needs PyTorch 2.0 or later; this Python has torch %s"
                                     % torch.__version__}
            else:
                try:
                    compiled = torch.compile(eager)
                    t0 = time.perf_counter()
                    compiled(*inputs)
                    sync()
                    result["compile_seconds"] = time.perf_counter() - t0
                    variants.append(("compile", compiled))
                except Exception as e:
                    result["compile"] = {"available": False, "why": "torch.compile failed: %s: %s"
                                         % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
        samples = {name: [] for name, _ in variants}
        pack_out = None
        for round_ in range(-2, args.iters):  # two warm-up rounds
            for name, fn in variants:
                if name == "eager_pack":
                    load()
                    try:
                        fn(*inputs)  # the first call after loading loads the kernels onto the device: not timed
                        torch.ops.kforge.reset_counters()
                        ms = timed(fn)
                        if round_ == args.iters - 1:
                            result["counters"] = json.loads(torch.ops.kforge.counters())  # of this round's forward
                            pack_out = fn(*inputs)
                    finally:
                        unload()
                else:
                    ms = timed(fn)
                if round_ >= 0:
                    samples[name].append(ms)
        for name, s in samples.items():
            result[name] = dict(_summary(s), available=True)
        if pack_out is not None:
            ref = eager(*inputs)
            result["pack_max_diff"] = (pack_out.double() - ref.double()).abs().max().item()
        base = result["eager"]["median_ms"]
        for name in ("eager_pack", "compile", "traced"):
            if name in samples:
                result[name]["speedup_over_eager"] = base / result[name]["median_ms"]
        if "traced" in samples:  # the pack's own gain on the TorchScript route
            result["eager_pack"]["speedup_over_traced"] = result["traced"]["median_ms"] / result["eager_pack"]["median_ms"]
    text = json.dumps(result)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
