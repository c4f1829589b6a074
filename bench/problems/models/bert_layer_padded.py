# The BERT-base encoder layer of bert_layer.py called as Hugging Face's BertModel calls it on a padded
# batch: the 0/1 attention mask [b, s] made into the additive mask [b, 1, 1, s] (get_extended_attention_mask:
# (1 - mask) * the dtype's lowest) and added to the divided scores before the softmax. Batch 16, sequence
# 384, each sample a different length (a SQuAD batch). Its profile finds the chain with a per-sample
# padding mask: the mask's row steps every heads x s rows of the scores.
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

    def forward(self, x, attention_mask):
        extended = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        q, k, v = self.heads_view(self.query(x)), self.heads_view(self.key(x)), self.heads_view(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_size)
        scores = scores + extended
        probs = F.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size(0), ctx.size(1), -1)
        h = self.attn_norm(self.attn_out(ctx) + x)
        return self.out_norm(self.out(F.gelu(self.inter(h))) + h)


def get_inputs():
    lengths = torch.randint(128, 385, (16,))
    mask = (torch.arange(384)[None, :] < lengths[:, None]).long()
    return [torch.randn(16, 384, 768), mask]


def get_init_inputs():
    return []
