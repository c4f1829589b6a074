# One Gemma 3 decoder layer as Hugging Face's Gemma3DecoderLayer writes it in eager mode: Gemma's RMSNorm
# (`(x.float() * rsqrt(mean(x^2) + eps) * (1.0 + w.float())).type_as(x)`, the weight an offset from one, the
# product in float32) before and after attention and around the MLP, q and k normalized per head the same
# way, the rotary embedding (rotate_half), `softmax(w, dim=-1, dtype=torch.float32).to(query.dtype)` over
# scores scaled by query_pre_attn_scalar ** -0.5 with the causal mask and padding folded in ([b, 1, q, k]),
# the post-norm residual adds (`residual + norm(sublayer)`), and the GELU gate
# `down(gelu(gate(x), approximate="tanh") * up(x))`. Qwen3-Next and Qwen3.5 write the same norm. Gemma 3
# 1B's shapes (hidden 1152, 4 heads of 256, one key and value head, intermediate 6912, eps 1e-6, rope theta
# 1e6) in bfloat16, batch 2, sequence 1024, each sample padded on the left to its own length. Traced by
# kforge-cli import, its profile finds: the input norm, the post-attention norm, the residual add with the
# pre-MLP norm, the post-MLP norm, q's and k's norms over the transposed view, the rotary embedding of q and
# of k, attention's softmax, the GELU gate.
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(hidden))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    b, kv, s, d = hidden_states.shape
    return hidden_states[:, :, None, :, :].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)


class Model(nn.Module):
    def __init__(self, hidden=1152, heads=4, kv_heads=1, head_dim=256, intermediate=6912, theta=1000000.0, query_pre_attn_scalar=256):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.scaling = query_pre_attn_scalar ** -0.5
        self.input_layernorm = RMSNorm(hidden)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.pre_feedforward_layernorm = RMSNorm(hidden)
        self.post_feedforward_layernorm = RMSNorm(hidden)
        self.q_norm = RMSNorm(head_dim)
        self.k_norm = RMSNorm(head_dim)
        self.q_proj = nn.Linear(hidden, heads * head_dim, bias=False)
        self.k_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v_proj = nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o_proj = nn.Linear(heads * head_dim, hidden, bias=False)
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)
        # Trained norms are offsets from one: small weights, not the zeros a fresh layer starts from.
        with torch.no_grad():
            for norm in (self.input_layernorm, self.post_attention_layernorm, self.pre_feedforward_layernorm,
                         self.post_feedforward_layernorm, self.q_norm, self.k_norm):
                norm.weight.normal_(0.0, 0.1)
        self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim)), persistent=False)
        self.to(torch.bfloat16)

    def attention(self, x, cos, sin, mask):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, -1, self.head_dim).transpose(1, 2)
        q = self.q_norm(q)
        k = self.k_norm(k)
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
        positions = torch.arange(s, device=hidden_states.device)[None, :].expand(b, s)
        freqs = (self.inv_freq.float()[None, :, None] @ positions[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos().to(hidden_states.dtype).unsqueeze(1)
        sin = emb.sin().to(hidden_states.dtype).unsqueeze(1)
        lowest = torch.finfo(hidden_states.dtype).min
        causal = torch.full((s, s), lowest, dtype=hidden_states.dtype, device=hidden_states.device).triu(1)
        mask = causal[None, None].expand(b, 1, s, s).masked_fill(attention_mask[:, None, None, :] == 0, lowest)

        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.attention(hidden_states, cos, sin, mask)
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.pre_feedforward_layernorm(hidden_states)
        gate = nn.functional.gelu(self.gate_proj(hidden_states), approximate="tanh")
        hidden_states = self.down_proj(gate * self.up_proj(hidden_states))
        hidden_states = self.post_feedforward_layernorm(hidden_states)
        return residual + hidden_states


def get_inputs():
    lengths = torch.randint(512, 1025, (2,))
    padded = (torch.arange(1024)[None, :] >= 1024 - lengths[:, None]).long()  # padded on the left
    return [torch.randn(2, 1024, 1152).to(torch.bfloat16), padded]


def get_init_inputs():
    return []
