#!/usr/bin/env python3
"""Times eager PyTorch and torch.compile (dynamic=False) on the template benchmark's cases, the same
way the kforge harness times kernels: CUDA events on the current stream, warm-up, L2 flushed (by a read) between
iterations, rotating inputs, median of many samples. Prints one JSON object per case."""
import json
import math
import sys

import torch
import torch.nn.functional as F

SAMPLES = 50
ROTATE = 3


def inputs(case, dev):
    s, dt = case["shape"], getattr(torch, case["dtype"])
    fam = case["family"]
    if fam == "group_norm":
        x = torch.randn(s["n"], s["c"], s["hw"], device=dev, dtype=dt)
        return [x, torch.randn(s["c"], device=dev, dtype=dt), torch.randn(s["c"], device=dev, dtype=dt)]
    if fam == "cross_entropy":
        return [torch.randn(s["rows"], s["vocab"], device=dev, dtype=dt),
                torch.randint(0, s["vocab"], (s["rows"],), device=dev)]
    x = torch.randn(s["rows"], s["cols"], device=dev, dtype=dt)
    if fam == "silu_mul":
        return [x, torch.randn_like(x)]
    if fam == "layer_norm":
        return [x, torch.randn(s["cols"], device=dev, dtype=dt), torch.randn(s["cols"], device=dev, dtype=dt)]
    if fam == "rms_norm":
        return [x, torch.randn(s["cols"], device=dev, dtype=dt)]
    return [x]


def fn_for(case):
    fam, s = case["family"], case["shape"]
    if fam == "softmax":
        return lambda x: torch.softmax(x, -1)
    if fam == "log_softmax":
        return lambda x: torch.log_softmax(x, -1)
    if fam == "layer_norm":
        return lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)
    if fam == "rms_norm":
        if hasattr(F, "rms_norm"):
            return lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)
        return lambda x, w: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w
    if fam == "group_norm":
        return lambda x, w, b: F.group_norm(x, s["groups"], w, b, 1e-5)
    if fam == "cross_entropy":
        return lambda x, t: F.cross_entropy(x, t)
    if fam == "silu_mul":
        return lambda g, u: F.silu(g) * u
    if fam == "relu":
        return torch.relu
    if fam == "sum":
        return lambda x: x.sum(-1)
    raise ValueError(fam)


def min_bytes(case, ins, out):
    return sum(t.numel() * t.element_size() for t in ins) + out.numel() * out.element_size()


def time_fn(fn, sets, flush, sink):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(SAMPLES)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(SAMPLES)]
    for i in range(5):
        fn(*sets[i % ROTATE])
    torch.cuda.synchronize()
    for i in range(SAMPLES):
        torch.sum(flush, dim=0, keepdim=True, out=sink)  # a read: a write would leave dirty lines to the timed run
        start[i].record()
        fn(*sets[i % ROTATE])
        end[i].record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1000.0 for s, e in zip(start, end))
    return t[len(t) // 2], t[len(t) // 4], t[3 * len(t) // 4]


def main():
    cases = json.load(open(sys.argv[1]))
    dev = torch.device("cuda")
    flush = torch.ones(2 * torch.cuda.get_device_properties(0).L2_cache_size // 8, dtype=torch.int64, device=dev)
    sink = torch.empty(1, dtype=torch.int64, device=dev)
    big = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    dst = torch.empty_like(big)
    for _ in range(3):
        dst.copy_(big)
    torch.cuda.synchronize()
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(10):
        ev0.record()
        dst.copy_(big)
        ev1.record()
        torch.cuda.synchronize()
        times.append(ev0.elapsed_time(ev1))
    copy_bw = 2 * big.numel() / (sorted(times)[5] / 1000.0)
    del big, dst
    print(json.dumps({"copy_bandwidth_GBps": copy_bw / 1e9}), flush=True)
    for case in cases:
        sets = [inputs(case, dev) for _ in range(ROTATE)]
        fn = fn_for(case)
        out = fn(*sets[0])
        floor_us = min_bytes(case, sets[0], out) / copy_bw * 1e6
        eager = time_fn(fn, sets, flush, sink)
        try:
            compiled = torch.compile(fn, dynamic=False)
            comp = time_fn(compiled, sets, flush, sink)
        except Exception as e:  # report, never hide
            comp = (math.nan, math.nan, math.nan)
            print(json.dumps({"case": case, "compile_error": str(e)[:300]}), flush=True)
        print(json.dumps({"case": case, "floor_us": floor_us, "eager_us": eager, "compile_us": comp}), flush=True)
        del sets
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
