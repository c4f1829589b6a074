# tst_pack's Python half: the pack runtime through torch.ops.load_library, as a PyTorch user loads it.
#   python3 pack_python_test.py LIBKFORGE_RUNTIME PACK ROWS COLS
# Prints one JSON line: whether the outputs matched ATen's and the runtime's counters.
import json
import sys

import torch

lib, pack, rows, cols = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
torch.manual_seed(5)
x = torch.randn(rows, cols)
big = torch.randn(rows * 4, cols)
ref, ref_big = torch.softmax(x, -1), torch.softmax(big, -1)

torch.ops.load_library(lib)
summary = torch.ops.kforge.load_pack(pack)
y = torch.softmax(x, -1)           # covered: the pack's kernel
y_big = torch.softmax(big, -1)     # more rows than verified: the original
counters = json.loads(torch.ops.kforge.counters())
torch.ops.kforge.unload_packs()
after = torch.softmax(x, -1)
print(json.dumps({"summary": summary,
                  "match": bool(torch.allclose(y, ref, rtol=1e-5, atol=1e-6)),
                  "match_fallback": bool(torch.equal(y_big, ref_big)),
                  "match_after_unload": bool(torch.equal(after, ref)),
                  "counters": counters}))
