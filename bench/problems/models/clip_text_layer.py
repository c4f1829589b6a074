# One layer of CLIP's text encoder as Hugging Face's CLIPEncoderLayer writes it in eager mode
# (Transformers 5): LayerNorm, q, k and v projections viewed into heads, `softmax(q @ k^T * head_dim ** -0.5
# + mask, -1, dtype=torch.float32).to(q.dtype)` with CLIP's causal mask, the output projection and residual
# add, a second LayerNorm and the MLP with QuickGELU (`ACT2FN["quick_gelu"]`: `x * sigmoid(1.702 * x)`, three
# ATen calls). CLIP ViT-L/14's text encoder, the one Stable Diffusion 1.x conditions on (hidden 768, 12 heads
# of 64, intermediate 3072, 77 tokens), in float16, batch 16 (a batch of prompts with their unconditional
# halves). Traced by kforge-cli import, its profile finds QuickGELU and attention's softmax beside the
# LayerNorms and the projections.
import torch
import torch.nn as nn


class QuickGELUActivation(nn.Module):
    def forward(self, input):
        return input * torch.sigmoid(1.702 * input)


class Model(nn.Module):
    def __init__(self, hidden=768, heads=12, intermediate=3072, eps=1e-5):
        super().__init__()
        self.head_dim = hidden // heads
        self.scale = self.head_dim ** -0.5
        self.layer_norm1 = nn.LayerNorm(hidden, eps=eps)
        self.layer_norm2 = nn.LayerNorm(hidden, eps=eps)
        self.q_proj, self.k_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.v_proj, self.out_proj = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, intermediate), nn.Linear(intermediate, hidden)
        self.activation_fn = QuickGELUActivation()
        self.to(torch.float16)

    def attention(self, x, mask):
        shape = (*x.shape[:-1], -1, self.head_dim)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        w = w + mask
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v).transpose(1, 2).contiguous()
        return self.out_proj(out.reshape(*x.shape[:-1], -1).contiguous())

    def forward(self, hidden_states):
        b, s, _ = hidden_states.shape
        lowest = torch.finfo(hidden_states.dtype).min
        mask = torch.full((s, s), lowest, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)[None, None]
        residual = hidden_states
        hidden_states = residual + self.attention(self.layer_norm1(hidden_states), mask)
        residual = hidden_states
        return residual + self.fc2(self.activation_fn(self.fc1(self.layer_norm2(hidden_states))))


def get_inputs():
    return [torch.randn(16, 77, 768).to(torch.float16)]


def get_init_inputs():
    return []
