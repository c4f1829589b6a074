# Llama's self-attention as Hugging Face's LlamaAttention and eager_attention_forward write it (Mistral,
# Qwen2, Qwen3, Gemma and most decoder models since copy it): rotary embedding, grouped key and value heads
# repeated, scores times the scale the module holds, the causal mask with the padding folded in
# ([b, 1, q, k], as masking_utils builds it in the model's dtype), then
# `softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)`. Llama 3.2 1B's shapes (hidden 2048, 32 heads,
# 8 key and value heads, head dim 64) in bfloat16, batch 2, sequence 1024, each sample a different length
# padded on the left. Its profile finds the attention softmax with casts, the upcast given to the softmax.
import torch
import torch.nn as nn


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class Model(nn.Module):
    def __init__(self, hidden=2048, heads=32, kv_heads=8, theta=500000.0):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = hidden // heads
        self.scaling = self.head_dim ** -0.5
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)), persistent=False)
        self.to(torch.bfloat16)

    def forward(self, x, attention_mask):
        b, s, _ = x.shape
        # The rotary tables per sample, in float32 then cast to x's dtype (LlamaRotaryEmbedding), then
        # unsqueezed over the heads (apply_rotary_pos_emb).
        positions = torch.arange(s, device=x.device)[None, :].expand(b, s)
        freqs = (self.inv_freq.float()[None, :, None] @ positions[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos().to(x.dtype).unsqueeze(1), emb.sin().to(x.dtype).unsqueeze(1)
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        groups = self.heads // self.kv_heads
        k = k[:, :, None].expand(b, self.kv_heads, groups, s, self.head_dim).reshape(b, self.heads, s, self.head_dim)
        v = v[:, :, None].expand(b, self.kv_heads, groups, s, self.head_dim).reshape(b, self.heads, s, self.head_dim)
        # The 4-D mask: causal, with the padded keys of each sample masked too.
        lowest = torch.finfo(x.dtype).min
        causal = torch.full((s, s), lowest, dtype=x.dtype, device=x.device).triu(1)
        mask = causal[None, None].expand(b, 1, s, s).masked_fill(attention_mask[:, None, None, :] == 0, lowest)
        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        w = w + mask
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out)


def get_inputs():
    lengths = torch.randint(512, 1025, (2,))
    padded = (torch.arange(1024)[None, :] >= 1024 - lengths[:, None]).long()  # padded on the left
    return [torch.randn(2, 1024, 2048).to(torch.bfloat16), padded]


def get_init_inputs():
    return []
