#!/usr/bin/env python3
"""Where does torch.compile's kernel gain on ours? For each case: writes Inductor's generated source, then
times eager, torch.compile and rendered kforge kernels in one process with one timer (events on the
current stream, 100 ms of warm-up, the L2 flushed by a read, rotating inputs), interleaved in rounds so
clock and thermal drift hit every contender alike. With --profile it times nothing and runs each
contender once between cudaProfilerStart/Stop, for Nsight Compute's --profile-from-start off.

kforge kernels are compiled here with NVRTC and launched through the driver API (ctypes), from the
source and launch plan `kforge-cli templates --render ... --launch-out` wrote.

Usage: inductor_study.py OUT_DIR [--profile] [--kernels DIR]   (DIR holds <case>-<k>.cu and .launch.json)
Cases: $KFORGE_STUDY_CASES, comma-separated names of CASES (default: the two float32 norms).
"""
import ctypes
import glob
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

CASES = {
    "layer_norm_f32": dict(rows=16384, cols=4096, fn=lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), params=2),
    "rms_norm_f32": dict(rows=16384, cols=4096, fn=lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6), params=1),
    "log_softmax_262144": dict(rows=1024, cols=262144, fn=lambda x: torch.log_softmax(x, -1), params=0),
}
ROUNDS, SAMPLES, SETS = 5, 30, 3


def lib(names):
    for n in names:
        for path in [n] + glob.glob(n):
            try:
                return ctypes.CDLL(path)
            except OSError:
                pass
    raise OSError(f"none of {names} loads")


class Nvrtc:
    """Compiles a kforge kernel with NVRTC and launches it with the driver API on torch's stream."""

    def __init__(self):
        site = os.path.dirname(os.path.dirname(torch.__file__))
        self.nvrtc = lib(["libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so*", site + "/nvidia/cu*/lib/libnvrtc.so*",
                          site + "/nvidia/cuda_nvrtc/lib/libnvrtc.so*"])
        self.cu = lib(["libcuda.so.1"])

    def check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed: {rc}")

    def load(self, src, name):
        prog = ctypes.c_void_p()
        self.check(self.nvrtc.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"k.cu", 0, None, None), "nvrtcCreateProgram")
        opts = [b"--gpu-architecture=sm_90", b"--std=c++17"]
        arr = (ctypes.c_char_p * len(opts))(*opts)
        rc = self.nvrtc.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        self.nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        logbuf = ctypes.create_string_buffer(size.value)
        self.nvrtc.nvrtcGetProgramLog(prog, logbuf)
        self.check(rc, "nvrtcCompileProgram: " + logbuf.value.decode()[-2000:])
        self.nvrtc.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        self.check(self.nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        self.check(self.cu.cuModuleLoadData(ctypes.byref(mod), cubin), "cuModuleLoadData")
        self.check(self.cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), "cuModuleGetFunction")
        return fn

    def kernel(self, src_path, plan_path, rows, cols):
        plan = json.load(open(plan_path))
        if any("cluster" in k for k in plan["kernels"]):
            raise RuntimeError("only plans without clusters")
        env = dict(rows=rows, cols=cols, sm_count=torch.cuda.get_device_properties(0).multi_processor_count,
                   ceil_div=lambda a, b: -(-a // b), min=min, max=max)
        ev = lambda e: int(eval(str(e), {"__builtins__": {}}, env))
        src = open(src_path).read()
        steps = []
        for k in plan["kernels"]:
            grid, block, smem = [ev(g) for g in k["grid"]], [ev(b) for b in k["block"]], ev(k.get("shared_bytes", 0))
            fn = self.load(src, k["name"])
            if smem > 48 * 1024:
                self.check(self.cu.cuFuncSetAttribute(fn, 8, smem), "cuFuncSetAttribute")  # MAX_DYNAMIC_SHARED_SIZE_BYTES
            steps.append((k, fn, grid, block, smem))
        # Workspaces are allocated once, as the worker does, and arrive uninitialised.
        ws = {w["name"]: torch.empty(max(1, ev(w["bytes"])), dtype=torch.uint8, device="cuda") for w in plan.get("workspace", [])}

        def launch(*tensors):
            x = tensors[0]
            ins = {"x": x, "weight": tensors[1] if len(tensors) > 1 else None, "bias": tensors[2] if len(tensors) > 2 else None}
            y = torch.empty_like(x)
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            for k, fn, grid, block, smem in steps:
                vals = []
                for a in k["args"]:
                    kind, nm = a.split(":")
                    if kind == "in":
                        t = ins[nm]
                        vals.append(ctypes.c_void_p(t.data_ptr() if t is not None else 0))
                    elif kind == "out":
                        vals.append(ctypes.c_void_p(y.data_ptr()))
                    elif kind == "ws":
                        vals.append(ctypes.c_void_p(ws[nm].data_ptr()))
                    elif kind == "i64":
                        vals.append(ctypes.c_longlong(ev(nm)))
                    else:
                        vals.append(ctypes.c_longlong(env[nm]))
                argv = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
                self.check(self.cu.cuLaunchKernel(fn, *grid, *block, smem, stream, argv, None), "cuLaunchKernel")
            return y
        return launch


def timer(fn, sets, flush, sink):
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(SAMPLES)]
    for i, (a, b) in enumerate(ev):
        torch.sum(flush, dim=0, keepdim=True, out=sink)
        a.record()
        fn(*sets[i % SETS])
        b.record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return t[SAMPLES // 2]


def warm(fn, sets, ms=100):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    i = 0
    while True:
        fn(*sets[i % SETS]); i += 1
        if i % 20 == 0:
            end.record(); end.synchronize()
            if start.elapsed_time(end) > ms:
                return


def main():
    out = sys.argv[1]
    profile = "--profile" in sys.argv
    kdir = sys.argv[sys.argv.index("--kernels") + 1] if "--kernels" in sys.argv else None
    os.makedirs(out, exist_ok=True)
    dev = torch.device("cuda")
    torch.manual_seed(0)
    flush = torch.ones(2 * torch.cuda.get_device_properties(0).L2_cache_size // 8, dtype=torch.int64, device=dev)
    sink = torch.empty(1, dtype=torch.int64, device=dev)
    nv = Nvrtc()
    from torch._inductor.utils import run_and_get_code
    to_profile = []
    names = os.environ.get("KFORGE_STUDY_CASES", "layer_norm_f32,rms_norm_f32").split(",")
    for name, c in ((n, CASES[n]) for n in names):
        rows, cols = c["rows"], c["cols"]
        sets = [[torch.randn(rows, cols, device=dev)] + [torch.randn(cols, device=dev) for _ in range(c["params"])] for _ in range(SETS)]
        compiled = torch.compile(c["fn"], dynamic=False)
        _, code = run_and_get_code(compiled, *sets[0])
        with open(f"{out}/inductor-{name}.py", "w") as f:
            f.write("\n\n".join(code))
        contenders = {"eager": c["fn"], "compile": compiled}
        for src in sorted(glob.glob(f"{kdir}/{name}-*.cu")) if kdir else []:
            tag = os.path.basename(src)[:-3]
            try:
                k = nv.kernel(src, src[:-3] + ".launch.json", rows, cols)
                ref = c["fn"](*sets[0])
                err = (k(*sets[0]) - ref).abs().max().item()
                print(f"{tag}: max abs error {err:.2e} against eager")
                contenders[tag] = k
            except Exception as e:
                print(f"{tag}: skipped ({e})")
        if profile:
            to_profile += [(f"{name}/{k}", fn, sets) for k, fn in contenders.items() if k != "eager"]
            continue
        floor = 2 * rows * cols * 4 / 4171e3  # us at the copy bandwidth of the template table
        times = {k: [] for k in contenders}
        for r in range(ROUNDS):
            for k, fn in contenders.items():
                warm(fn, sets)
                times[k].append(timer(fn, sets, flush, sink))
        print(f"== {name} ({rows}x{cols} float32), median of {SAMPLES} per round, {ROUNDS} rounds interleaved")
        for k, t in times.items():
            t = sorted(t)
            print(f"| {name} | {k} | {t[len(t) // 2]:.1f} | {t[0]:.1f}-{t[-1]:.1f} | {100 * floor / t[len(t) // 2]:.0f}% |")
    if profile:
        torch.cuda.synchronize()
        for tag, fn, sets in to_profile:
            warm(fn, sets, 20)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            torch.sum(flush, dim=0, keepdim=True, out=sink)
            fn(*sets[0])
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            print(f"profiled {tag}")


if __name__ == "__main__":
    main()
