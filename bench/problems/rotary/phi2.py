# Rotary embedding as Llama writes it, Phi-2's head size 80: batch 4, 2048 tokens, 32 heads, float32: x is the q projection's
# [b, s, h, d] view; the forward transposes it to [b, h, s, d] and applies q * cos + rotate_half(q) * sin with
# cos and sin [s, d] (kforge's rotary_embedding card: --family rotary_embedding --shape b=4,s=2048,h=32,d=80).
import torch

B, S, H, D = 4, 2048, 32, 80
DTYPE = torch.float32


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
