# Rotary embedding as Hugging Face's Llama writes it: tables per sequence from position ids ([b, s, d],
# unsqueezed to [b, 1, s, d]) and rotate_half computing its half from the tensor; Llama 3 8B's 32 heads of
# 128, batch 4 of 4096 tokens, bfloat16 (kforge's rotary_embedding_batched card:
# --family rotary_embedding_batched --shape b=4,s=4096,h=32,d=128).
import torch

B, S, H, D = 4, 4096, 32, 128
DTYPE = torch.bfloat16


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class Model(torch.nn.Module):
    def forward(self, x, cos, sin):
        q = x.transpose(1, 2)
        return (q * cos.unsqueeze(1)) + (rotate_half(q) * sin.unsqueeze(1))


def get_inputs():
    pos = torch.arange(S, dtype=torch.float32)[None, :, None] + torch.arange(B, dtype=torch.float32)[:, None, None] * 7
    freq = 500000.0 ** (-torch.arange(0, D, 2, dtype=torch.float32) / D)
    angle = torch.cat((pos * freq, pos * freq), dim=-1)
    return [torch.randn(B, S, H, D).to(DTYPE), angle.cos().to(DTYPE), angle.sin().to(DTYPE)]


def get_init_inputs():
    return []
