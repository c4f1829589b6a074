# One Llama decoder layer as Hugging Face's LlamaDecoderLayer writes it in eager mode (Mistral, Qwen2 and
# Qwen3 copy it): LlamaRMSNorm before attention, the rotary embedding on q and k (rotate_half), grouped key
# and value heads repeated, `softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)` over scores with the
# causal mask and padding folded in ([b, 1, q, k]), the residual add and the RMSNorm after it, the gated MLP
# `down(silu(gate(x)) * up(x))`, the second residual. Llama 3.2 1B's shapes (hidden 2048, 32 heads, 8 key
# and value heads, intermediate 8192, eps 1e-5, rope theta 500000) in bfloat16, batch 2, sequence 1024,
# each sample padded on the left to its own length. Traced by kforge-cli import, its profile finds five
# chains: the RMSNorm, the residual add with the second RMSNorm, the rotary embedding of q and of k,
# attention's softmax, the SiLU gate.
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    b, kv, s, d = hidden_states.shape
    return hidden_states[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Model(nn.Module):
    def __init__(self, hidden=2048, heads=32, kv_heads=8, intermediate=8192, theta=500000.0):
        super().__init__()
        self.heads, self.kv_heads = heads, kv_heads
        self.head_dim = hidden // heads
        self.scaling = self.head_dim ** -0.5
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        self.act_fn = nn.SiLU()
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)), persistent=False)
        self.to(torch.bfloat16)

    def attention(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.heads // self.kv_heads)
        v = repeat_kv(v, self.heads // self.kv_heads)
        w = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        w = w + mask
        w = nn.functional.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(w, v).transpose(1, 2).contiguous()
        return self.o_proj(out.reshape(b, s, -1))

    def forward(self, hidden_states, attention_mask):
        b, s, _ = hidden_states.shape
        # The rotary tables per sample, in float32 then cast (LlamaRotaryEmbedding), unsqueezed over the heads.
        positions = torch.arange(s, device=hidden_states.device)[None, :].expand(b, s)
        freqs = (self.inv_freq.float()[None, :, None] @ positions[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos().to(hidden_states.dtype).unsqueeze(1)
        sin = emb.sin().to(hidden_states.dtype).unsqueeze(1)
        # The 4-D mask: causal, with each sample's padded keys masked too.
        lowest = torch.finfo(hidden_states.dtype).min
        causal = torch.full((s, s), lowest, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        mask = causal[None, None].expand(b, 1, s, s).masked_fill(attention_mask[:, None, None, :] == 0, lowest)

        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.attention(hidden_states, cos, sin, mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.down_proj(self.act_fn(self.gate_proj(hidden_states)) * self.up_proj(hidden_states))
        return residual + hidden_states


def get_inputs():
    lengths = torch.randint(512, 1025, (2,))
    padded = (torch.arange(1024)[None, :] >= 1024 - lengths[:, None]).long()  # padded on the left
    return [torch.randn(2, 1024, 2048).to(torch.bfloat16), padded]


def get_init_inputs():
    return []
