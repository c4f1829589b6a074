# A Swin-T stage-1 window attention block as timm writes it (float32): 7 x 7 windows of a 56 x 56 map
# (64 windows a sample, batch 32), 3 heads of 32, q scaled before the product, the learned relative
# position bias [1, heads, 49, 49] added to the scores, then the softmax with no scale of its own.
# Imported as a whole model: its profile finds the unscaled masked chain (the bias a [1, h, q, k] mask).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim=96, heads=3, window=7):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)
        n = window * window
        table = torch.randn((2 * window - 1) ** 2, heads) * 0.02
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (window - 1)
        index = rel[:, :, 0] * (2 * window - 1) + rel[:, :, 1]
        self.register_buffer("bias", table[index.view(-1)].view(n, n, heads).permute(2, 0, 1).contiguous().unsqueeze(0))

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q * self.scale) @ k.transpose(-2, -1)
        attn = attn + self.bias
        attn = attn.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, c))


def get_inputs():
    return [torch.randn(32 * 64, 49, 96)]


def get_init_inputs():
    return []
