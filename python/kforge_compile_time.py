#!/usr/bin/env python3
"""Time a KernelBench-style problem eager and under torch.compile, in one process, for kforge's fast_p report.

    python3 kforge_compile_time.py PROBLEM.py [--device cpu|cuda] [--iters N] [--out RESULT.json]

Writes {"available": true, "eager_ms": .., "compile_ms": .., "torch": "2.11.0", "device": "cuda"} (medians
over N runs after warm-up; CUDA events on the GPU), or {"available": false, "why": "..."} when this Python
cannot compile (torch.compile arrived in PyTorch 2.0) or the problem does not compile. kforge-cli fastp
divides its speedup over eager by eager_ms / compile_ms to get the speedup over torch.compile.
"""

import argparse
import importlib.util
import json
import statistics
import sys
import time


def _result(out, data):
    text = json.dumps(data)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    print(text)


def _time_ms(fn, inputs, device, iters):
    import torch

    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        samples = []
        for _ in range(iters):
            if device == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn(*inputs)
                end.record()
                end.synchronize()
                samples.append(start.elapsed_time(end))
            else:
                t0 = time.perf_counter()
                fn(*inputs)
                samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("problem")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--out")
    args = p.parse_args(argv)
    try:
        import torch
    except ImportError as e:
        _result(args.out, {"available": False, "why": "this Python has no torch (%s)" % e})
        return 0
    if not hasattr(torch, "compile"):
        _result(args.out, {"available": False, "why": "torch.compile needs PyTorch 2.0 or later; this Python has torch %s"
                           % torch.__version__, "torch": torch.__version__})
        return 0
    if args.device == "cuda" and not torch.cuda.is_available():
        _result(args.out, {"available": False, "why": "this Python's torch %s sees no CUDA device" % torch.__version__})
        return 0
    try:
        spec = importlib.util.spec_from_file_location("kforge_compile_problem", args.problem)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs()).eval().to(args.device)
        inputs = [t.to(args.device) if isinstance(t, torch.Tensor) else t for t in module.get_inputs()]
    except Exception as e:
        _result(args.out, {"available": False, "why": "the problem did not build: %s: %s" % (type(e).__name__, e)})
        return 0
    try:
        eager = _time_ms(model, inputs, args.device, args.iters)
        compiled = torch.compile(model)
        compile_ms = _time_ms(compiled, inputs, args.device, args.iters)
    except Exception as e:
        _result(args.out, {"available": False, "why": "torch.compile failed on the problem: %s: %s"
                           % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
        return 0
    _result(args.out, {"available": True, "eager_ms": eager, "compile_ms": compile_ms, "torch": torch.__version__,
                       "device": args.device, "iters": args.iters})
    return 0


if __name__ == "__main__":
    sys.exit(main())
