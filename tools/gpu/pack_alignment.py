"""A CUDA softmax pack against inputs at and off the alignment its kernel was verified at.

Usage: python3 tools/gpu/pack_alignment.py RUNTIME_SO PACK_DIR ROWS COLS
Loads the pack, runs softmax on a fresh tensor (the pack's kernel should take it) and on a contiguous
view 4 bytes off (it should fall back, `alignment`), checks both against ATen, prints the counters.
"""
import json
import sys

import torch

runtime, pack, rows, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.ops.load_library(runtime)
x = torch.randn(rows, cols, device="cuda")
off = torch.randn(rows * cols + 1, device="cuda")[1:].view(rows, cols)
refs = [torch.softmax(x, -1), torch.softmax(off, -1)]
print(torch.ops.kforge.load_pack(pack))
outs = [torch.softmax(x, -1), torch.softmax(off, -1)]
torch.cuda.synchronize()
counters = json.loads(torch.ops.kforge.counters())
torch.ops.kforge.unload_packs()
print(json.dumps(counters, indent=1))
for name, o, r in zip(("aligned", "4 bytes off"), outs, refs):
    print(name, "data_ptr % 256 =", (x if name == "aligned" else off).data_ptr() % 256, "max diff", (o - r).abs().max().item())
