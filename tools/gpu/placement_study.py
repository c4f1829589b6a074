#!/usr/bin/env python3
"""Does where a tensor lands in device memory change a memory-bound kernel's time? Allocates several
input sets for the same operator (each in its own allocation, with filler allocations between them so
they land at different addresses) and times each set on its own: events, read flush of the L2, median
of 30. A spread across sets far above the spread within a set means placement matters, and a harness
that rotates over two sets takes its median from a bimodal sample."""
import torch
import torch.nn.functional as F

dev = torch.device("cuda")
l2 = torch.cuda.get_device_properties(0).L2_cache_size
flush = torch.ones(2 * l2 // 8, dtype=torch.int64, device=dev)
sink = torch.empty(1, dtype=torch.int64, device=dev)


def med(fn, args, n=30):
    for _ in range(3):
        fn(*args)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
    for a, b in ev:
        torch.sum(flush, dim=0, keepdim=True, out=sink)
        a.record()
        fn(*args)
        b.record()
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) * 1000 for a, b in ev)
    return t[n // 2], t[n // 4], t[3 * n // 4]


cases = [
    ("relu fp32 16384x4096", lambda: [torch.randn(16384, 4096, device=dev)], lambda x: torch.relu(x)),
    ("rms_norm fp32 16384x4096", lambda: [torch.randn(16384, 4096, device=dev), torch.randn(4096, device=dev)],
     lambda x, w: F.rms_norm(x, (4096,), w, 1e-6)),
]
for name, make, fn in cases:
    sets, fillers = [], []
    for i in range(8):
        sets.append(make())
        fillers.append(torch.empty((i + 1) * 3 * 2**20 + 12345 * 256, dtype=torch.uint8, device=dev))
    rows = []
    for rep in range(2):
        rows.append([med(fn, s) for s in sets])
    print(f"{name}: per-set median us (p25-p75), two passes")
    for i in range(len(sets)):
        a, b = rows[0][i], rows[1][i]
        print(f"  set {i} @0x{sets[i][0].data_ptr():x}: {a[0]:.1f} ({a[1]:.1f}-{a[2]:.1f})  {b[0]:.1f} ({b[1]:.1f}-{b[2]:.1f})")
    del sets, fillers
    torch.cuda.empty_cache()
