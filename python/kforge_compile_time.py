#!/usr/bin/env python3
"""Time a KernelBench-style problem eager and under torch.compile, in one process, for kforge's fast_p report.

    python3 kforge_compile_time.py PROBLEM.py [--device cpu|cuda] [--iters N] [--out RESULT.json]
    python3 kforge_compile_time.py PROBLEM.py... --out-dir DIR [--device cpu|cuda] [--iters N]

Writes {"available": true, "eager_ms": .., "compile_ms": .., "torch": "2.11.0", "device": "cuda"} (medians
over N runs after warm-up; CUDA events on the GPU), or {"available": false, "why": "..."} when this Python
cannot compile (torch.compile arrived in PyTorch 2.0) or the problem does not compile. kforge-cli fastp
divides its speedup over eager by eager_ms / compile_ms to get the speedup over torch.compile.

With several problems and --out-dir, they are timed one after another in this one process (torch and
the compiler start once, which on a GPU host is most of a problem's cost) and each result goes to
DIR/<problem>.compile.json, the file `kforge-cli fastp --compile-times DIR` reads.
"""

import argparse
import gc
import importlib.util
import os
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
    p.add_argument("problem", nargs="+")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--out")
    p.add_argument("--out-dir")
    args = p.parse_args(argv)
    if len(args.problem) > 1 and not args.out_dir:
        p.error("several problems need --out-dir")
    if args.out and args.out_dir:
        p.error("--out and --out-dir exclude each other")
    if args.out_dir:
        os.makedirs(args.out_dir, exist_ok=True)
    for problem in args.problem:
        out = args.out
        if args.out_dir:
            out = os.path.join(args.out_dir, os.path.splitext(os.path.basename(problem))[0] + ".compile.json")
        _time_problem(problem, args, out)
    return 0


def _time_problem(problem, args, out):
    try:
        import torch
    except ImportError as e:
        _result(out, {"available": False, "why": "this Python has no torch (%s)" % e})
        return
    if not hasattr(torch, "compile"):
        _result(out, {"available": False, "why": "torch.compile needs PyTorch 2.0 or later; this Python has torch %s"
                      % torch.__version__, "torch": torch.__version__})
        return
    if args.device == "cuda" and not torch.cuda.is_available():
        _result(out, {"available": False, "why": "this Python's torch %s sees no CUDA device" % torch.__version__})
        return
    try:
        _measure(torch, problem, args, out)
    finally:
        # The next problem starts from a clean compiler and the device's memory back.
        torch._dynamo.reset()
        gc.collect()
        if args.device == "cuda":
            torch.cuda.empty_cache()


def _measure(torch, problem, args, out):
    try:
        spec = importlib.util.spec_from_file_location("kforge_compile_problem", problem)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        torch.manual_seed(0)
        # Made on the device (a host-side draw of a KernelBench input takes seconds), and left in the
        # mode the problem leaves it in, as kforge_capture.py does: KernelBench runs models in training
        # mode, so a BatchNorm uses the batch's statistics here as in the captured forward.
        with torch.device(args.device):
            model = module.Model(*module.get_init_inputs()).to(args.device)
            inputs = [t.to(args.device) if isinstance(t, torch.Tensor) else t for t in module.get_inputs()]
    except Exception as e:
        _result(out, {"available": False, "why": "the problem did not build: %s: %s" % (type(e).__name__, e)})
        return
    try:
        eager = _time_ms(model, inputs, args.device, args.iters)
        compiled = torch.compile(model)
        compile_ms = _time_ms(compiled, inputs, args.device, args.iters)
    except Exception as e:
        _result(out, {"available": False, "why": "torch.compile failed on the problem: %s: %s"
                      % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")})
        return
    _result(out, {"available": True, "eager_ms": eager, "compile_ms": compile_ms, "torch": torch.__version__,
                  "device": args.device, "iters": args.iters})


if __name__ == "__main__":
    sys.exit(main())
