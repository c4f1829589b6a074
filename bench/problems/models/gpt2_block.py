# One GPT-2 block as Hugging Face's GPT2Block writes it in eager mode (Transformers 5): LayerNorm, the fused
# q/k/v projection as a Conv1D (`addmm(bias, x.view(-1, nx), weight)`) split three ways and viewed into heads,
# `softmax(q @ k^T * head_dim ** -0.5 + mask, -1).type(v.dtype)` with the causal mask and padding folded in
# ([b, 1, q, k]), the output projection and residual add, a second LayerNorm and the MLP with NewGELU
# (`ACT2FN["gelu_new"]`: `0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))`, eight
# ATen calls; GPT-Neo, GPT-J, CodeGen and T5 v1.1's gate use the same function). GPT-2 medium's shapes
# (hidden 1024, 16 heads of 64, intermediate 4096, eps 1e-5) in bfloat16, batch 4, sequence 1024, each
# sample padded on the left to its own length. Traced by kforge-cli import, its profile finds the GELU
# written out (gelu_new) and attention's softmax beside the LayerNorms and the projections.
import math

import torch
import torch.nn as nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class Model(nn.Module):
    def __init__(self, hidden=1024, heads=16, intermediate=4096, eps=1e-5):
        super().__init__()
        self.heads, self.head_dim, self.split_size = heads, hidden // heads, hidden
        self.scaling = self.head_dim ** -0.5
        self.ln_1 = nn.LayerNorm(hidden, eps=eps)
        self.ln_2 = nn.LayerNorm(hidden, eps=eps)
        self.c_attn = Conv1D(3 * hidden, hidden)
        self.attn_proj = Conv1D(hidden, hidden)
        self.c_fc = Conv1D(intermediate, hidden)
        self.mlp_proj = Conv1D(hidden, intermediate)
        self.act = NewGELUActivation()
        self.to(torch.bfloat16)

    def attention(self, x, mask):
        q, k, v = self.c_attn(x).split(self.split_size, dim=2)
        shape = (*q.shape[:-1], -1, self.head_dim)
        q, k, v = q.view(shape).transpose(1, 2), k.view(shape).transpose(1, 2), v.view(shape).transpose(1, 2)
        w = torch.matmul(q, k.transpose(-1, -2)) * self.scaling
        w = w + mask
        w = nn.functional.softmax(w, dim=-1)
        w = w.type(v.dtype)
        out = torch.matmul(w, v).transpose(1, 2)
        return self.attn_proj(out.reshape(*out.shape[:-2], -1).contiguous())

    def forward(self, hidden_states, attention_mask):
        b, s, _ = hidden_states.shape
        lowest = torch.finfo(hidden_states.dtype).min
        causal = torch.full((s, s), lowest, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        mask = causal[None, None].expand(b, 1, s, s).masked_fill(attention_mask[:, None, None, :] == 0, lowest)
        residual = hidden_states
        hidden_states = residual + self.attention(self.ln_1(hidden_states), mask)
        residual = hidden_states
        return residual + self.mlp_proj(self.act(self.c_fc(self.ln_2(hidden_states))))


def get_inputs():
    lengths = torch.randint(512, 1025, (4,))
    padded = (torch.arange(1024)[None, :] >= 1024 - lengths[:, None]).long()  # padded on the left
    return [torch.randn(4, 1024, 1024).to(torch.bfloat16), padded]


def get_init_inputs():
    return []
