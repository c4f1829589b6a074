"""GPT-2's MLP and T5 v1.1's gated feed-forward, both with Hugging Face's NewGELUActivation ("gelu_new"),
traced as kforge-cli import traces a model (the numbers become 0-dim float64 tensor constants) and saved.

    python3 new_gelu_block.py OUT.pt DTYPE        # DTYPE float32 or bfloat16; input [2, 16, 64]
"""
import math
import sys

import torch
import torch.nn as nn


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc, self.c_proj = nn.Linear(64, 256), nn.Linear(256, 64)
        self.wi_0, self.wi_1 = nn.Linear(64, 128, bias=False), nn.Linear(64, 128, bias=False)
        self.wo, self.act = nn.Linear(128, 64, bias=False), NewGELUActivation()

    def forward(self, x):
        h = x + self.c_proj(self.act(self.c_fc(x)))
        return h + self.wo(self.act(self.wi_0(h)) * self.wi_1(h))


dtype = getattr(torch, sys.argv[2])
torch.manual_seed(0)
torch.jit.trace(Block().to(dtype), (torch.randn(2, 16, 64).to(dtype),)).save(sys.argv[1])
