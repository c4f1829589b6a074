# A BERT-base encoder layer as Hugging Face's BertLayer writes it (float32, no casts): separate query, key
# and value projections viewed as [b, heads, s, d], the scores divided by math.sqrt(head_size), the
# functional softmax, the output projection with a residual and post-norm, then the GELU MLP with its own
# residual and norm. Batch 16, sequence 384 (a SQuAD-length input), no attention mask (a layer called with
# none). Imported as a whole model: its profile finds the dividing attention-softmax chain.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, hidden=768, heads=12, intermediate=3072):
        super().__init__()
        self.heads = heads
        self.head_size = hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.inter = nn.Linear(hidden, intermediate)
        self.out = nn.Linear(intermediate, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=1e-12)

    def heads_view(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_size).permute(0, 2, 1, 3)

    def forward(self, x):
        q, k, v = self.heads_view(self.query(x)), self.heads_view(self.key(x)), self.heads_view(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_size)
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size(0), ctx.size(1), -1)
        h = self.attn_norm(self.attn_out(ctx) + x)
        return self.out_norm(self.out(F.gelu(self.inter(h))) + h)


def get_inputs():
    return [torch.randn(16, 384, 768)]


def get_init_inputs():
    return []
