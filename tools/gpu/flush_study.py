#!/usr/bin/env python3
"""How the L2 flush between timed runs changes the time of memory-bound kernels.

A flush that writes (zero_, a memset) leaves up to an L2's worth of dirty lines, which the timed kernel
then writes back to memory as it evicts them: extra traffic charged to the kernel. A flush that only
reads leaves clean lines, evicted for free. This times the same operators under each flush, plus no
flush (rotating inputs larger than the L2), and a write flush followed by a sleep (the kforge harness
spun 50 us after its memset). Prints a table, one row per operator, median microseconds per mode."""
import torch
import torch.nn.functional as F

SAMPLES = 40
ROTATE = 3
dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.empty(2 * l2 // 8, dtype=torch.int64, device=dev)
sink = torch.empty(1, dtype=torch.int64, device=dev)


def do_flush(mode):
    if mode == "zero":
        flush.zero_()
    elif mode == "zero+sleep":
        flush.zero_()
        torch.cuda._sleep(100000)
    elif mode == "read":
        torch.sum(flush, dim=0, keepdim=True, out=sink)


def time_fn(fn, sets, mode):
    for i in range(5):
        fn(*sets[i % ROTATE])
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(SAMPLES)]
    for i, (a, b) in enumerate(ev):
        do_flush(mode)
        a.record()
        fn(*sets[i % ROTATE])
        b.record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1000.0 for a, b in ev)
    return t[len(t) // 2]


def rows(r, c, dt, extra=0):
    return lambda: [torch.randn(r, c, device=dev, dtype=dt)] + [torch.randn(c, device=dev, dtype=dt) for _ in range(extra)]


ln = lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)
rms = lambda x, w: F.rms_norm(x, (x.shape[-1],), w, 1e-6)
cases = [
    ("copy fp32 16384x4096", rows(16384, 4096, torch.float32), lambda x: x.clone(), 2 * 16384 * 4096 * 4),
    ("relu fp32 16384x4096", rows(16384, 4096, torch.float32), torch.relu, 2 * 16384 * 4096 * 4),
    ("sum fp32 16384x4096", rows(16384, 4096, torch.float32), lambda x: x.sum(-1), 16384 * 4096 * 4),
    ("softmax fp32 16384x4096", rows(16384, 4096, torch.float32), lambda x: torch.softmax(x, -1), 2 * 16384 * 4096 * 4),
    ("softmax bf16 16384x4096", rows(16384, 4096, torch.bfloat16), lambda x: torch.softmax(x, -1), 2 * 16384 * 4096 * 2),
    ("layer_norm fp32 16384x4096 compiled", rows(16384, 4096, torch.float32, 2), torch.compile(ln, dynamic=False), 2 * 16384 * 4096 * 4),
    ("layer_norm bf16 16384x8192 compiled", rows(16384, 8192, torch.bfloat16, 2), torch.compile(ln, dynamic=False), 2 * 16384 * 8192 * 2),
    ("layer_norm bf16 16384x8192 eager", rows(16384, 8192, torch.bfloat16, 2), ln, 2 * 16384 * 8192 * 2),
    ("rms_norm fp32 16384x4096 compiled", rows(16384, 4096, torch.float32, 1), torch.compile(rms, dynamic=False), 2 * 16384 * 4096 * 4),
]
modes = ["zero", "zero+sleep", "read", "none"]
print(f"L2 {l2 / 2**20:.0f} MiB, flush buffer {flush.numel() * 8 / 2**20:.0f} MiB, {SAMPLES} samples, {ROTATE} input sets")
print("| operator | " + " | ".join(f"{m} us" for m in modes) + " | GB/s with read flush |")
print("|---|" + "---|" * (len(modes) + 1))
for name, make, fn, nbytes in cases:
    sets = [make() for _ in range(ROTATE)]
    t = {m: time_fn(fn, sets, m) for m in modes}
    t2 = {m: time_fn(fn, sets, m) for m in reversed(modes)}  # twice, in the other order: the spread
    cells = " | ".join(f"{t[m]:.1f} / {t2[m]:.1f}" for m in modes)
    print(f"| {name} | {cells} | {nbytes / (min(t['read'], t2['read']) * 1e-6) / 1e9:.0f} |", flush=True)
    del sets
    torch.cuda.empty_cache()
