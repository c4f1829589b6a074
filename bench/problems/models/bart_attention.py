# BART-base's self-attention as Hugging Face's BartAttention writes it in eager mode (OPT, Whisper, CLIP,
# Marian and Pegasus copy it): q scaled before the batched product, the scores viewed [b, h, q, k] for the
# padding mask made per sample and query ([b, 1, q, k], as _prepare_4d_attention_mask expands and fills it),
# viewed back to [b * h, q, k], then the softmax with no scale. Float32, batch 16, sequence 512, each sample
# a different length. Its profile finds the unscaled chain with the view between the add and the softmax.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden=768, heads=12):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(hidden, hidden)
        self.k_proj = nn.Linear(hidden, hidden)
        self.v_proj = nn.Linear(hidden, hidden)
        self.out_proj = nn.Linear(hidden, hidden)

    def shape(self, t, s, b):
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2).contiguous()

    def forward(self, x, attention_mask):
        b, s, _ = x.shape
        expanded = attention_mask[:, None, None, :].expand(b, 1, s, s).to(x.dtype)
        inverted = 1.0 - expanded
        mask = inverted.masked_fill(inverted.to(torch.bool), torch.finfo(x.dtype).min)
        q = self.shape(self.q_proj(x) * self.scaling, s, b).view(b * self.heads, s, self.head_dim)
        k = self.shape(self.k_proj(x), s, b).view(b * self.heads, s, self.head_dim)
        v = self.shape(self.v_proj(x), s, b).view(b * self.heads, s, self.head_dim)
        w = torch.bmm(q, k.transpose(1, 2))
        w = w.view(b, self.heads, s, s) + mask
        w = w.view(b * self.heads, s, s)
        w = nn.functional.softmax(w, dim=-1)
        out = torch.bmm(w, v).view(b, self.heads, s, self.head_dim).transpose(1, 2).reshape(b, s, -1)
        return self.out_proj(out)


def get_inputs():
    lengths = torch.randint(256, 513, (16,))
    return [torch.randn(16, 512, 768), (torch.arange(512)[None, :] < lengths[:, None]).long()]


def get_init_inputs():
    return []
