#!/usr/bin/env python3
"""Times the harness benchmark's control kernels and their eager ATen ops outside kforge, so the
harness's numbers can be checked against independent timers.

Reads the control-N.json/.cu files `kforge-cuda-bench --dump DIR` wrote. Each kernel is compiled with
CuPy (its own NVRTC) and launched on torch tensors; the eager op is torch.relu / torch.sum(x, -1).
Two timers: CUDA events around each call after a 2x-L2 flush (median of 100), and
triton.testing.do_bench (median). Prints a markdown table.

Usage: controls_crosscheck.py DIR
"""
import glob
import json
import statistics
import sys
import warnings

import torch


def events_median(fn, flush, reps=100, warmup=10):
    sink = torch.empty(1, dtype=flush.dtype, device=flush.device)
    for _ in range(warmup):
        fn()
    times = []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        torch.sum(flush, dim=0, keepdim=True, out=sink)  # flush L2 by reading, as the kforge worker does
        torch.cuda._sleep(100_000)  # keep the GPU busy while the host enqueues the timed call
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def do_bench_median(fn):
    try:
        import triton.testing
    except Exception:  # triton missing: that column stays empty
        return float("nan")
    return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median") * 1000.0


def main():
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    folder = sys.argv[1]
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.ones(2 * l2 // 8, dtype=torch.int64, device="cuda")
    try:
        import cupy
    except Exception as e:  # the kernels cannot be launched without it; eager is still timed
        print(f"cupy unavailable ({e}); timing eager ops only")
        cupy = None
    rows = []
    for path in sorted(glob.glob(f"{folder}/control-*.json")):
        c = json.load(open(path))
        shape = c["shape"]
        x = torch.randn(shape["rows"], shape["cols"], device="cuda")
        eager = (lambda: torch.relu(x)) if c["family"] == "relu" else (lambda: torch.sum(x, -1))
        kernel_ev = kernel_db = float("nan")
        if cupy is not None:
            src = open(c["source"]).read()
            fn = cupy.RawModule(code=src, options=("--std=c++17",)).get_function(c["kernel"])
            y = eager().clone()
            args = (x.data_ptr(), y.data_ptr(), shape["rows"], shape["cols"])
            cargs = (cupy.uint64(args[0]), cupy.uint64(args[1]), cupy.int64(args[2]), cupy.int64(args[3]))
            stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

            def launch():
                with stream:
                    fn(tuple(c["grid"]), tuple(c["block"]), cargs)

            launch()
            torch.cuda.synchronize()
            err = (y - eager()).abs().max().item()
            kernel_ev = events_median(launch, flush)
            kernel_db = do_bench_median(launch)
        else:
            err = float("nan")
        eager_ev = events_median(eager, flush)
        eager_db = do_bench_median(eager)
        rows.append((c["name"], c["harness_kernel_us"], c["harness_eager_us"], kernel_ev, eager_ev, kernel_db, eager_db, err))
    print("| control | harness kernel us | harness eager us | events kernel us | events eager us | do_bench kernel us | do_bench eager us | eager/kernel (events) | max abs diff |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r[4] / r[3] if r[3] == r[3] and r[3] > 0 else float("nan")
        print(f"| {r[0]} | {r[1]:.1f} | {r[2]:.1f} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.1f} | {ratio:.3f}x | {r[7]:.2g} |")


if __name__ == "__main__":
    main()
