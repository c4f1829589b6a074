# Rotary embedding as Llama writes it, kforge's built-in decoder block at the H200 preset: batch 8, 2048 tokens, 32 heads of 128, bfloat16: x is the q projection's
# [b, s, h, d] view; the forward transposes it to [b, h, s, d] and applies q * cos + rotate_half(q) * sin with
# cos and sin [s, d] (kforge's rotary_embedding card: --family rotary_embedding --shape b=8,s=2048,h=32,d=128).
import torch

B, S, H, D = 8, 2048, 32, 128
DTYPE = torch.bfloat16


class Model(torch.nn.Module):
    def forward(self, x, cos, sin):
        q = x.transpose(1, 2)
        rotated = torch.cat((-q[..., D // 2:], q[..., :D // 2]), dim=-1)
        return q * cos + rotated * sin


def get_inputs():
    pos = torch.arange(S, dtype=torch.float32)[:, None]
    freq = 10000.0 ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)
    angle = torch.cat((pos * freq, pos * freq), dim=-1)
    return [torch.randn(B, S, H, D).to(DTYPE), angle.cos().to(DTYPE), angle.sin().to(DTYPE)]


def get_init_inputs():
    return []
