"""The transformer pieces of docs/model.md §4–5 in plain float64 PyTorch, written from the text:
rotate-half RoPE, causal grouped-query attention with an explicit masked softmax (no online
softmax, no tiles), the attention mixer with its projections, and the SwiGLU gate."""
import math

import torch
import torch.nn.functional as F


def rope(x, theta, offset=0):
    """x [B,T,H,hd]: the pair (i, i + hd/2) at position p = offset + t rotated by p·theta^(−2i/hd)."""
    T, hd = x.shape[1], x.shape[3]
    half = hd // 2
    i = torch.arange(half, dtype=torch.float64)
    freq = theta ** (-2 * i / hd)
    p = torch.arange(offset, offset + T, dtype=torch.float64)
    ang = p[:, None] * freq[None, :]  # [T, half]
    cos, sin = torch.cos(ang)[None, :, None, :], torch.sin(ang)[None, :, None, :]
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def attention(q, k, v):
    """q [B,T,Hq,hd], k, v [B,T,Hkv,hd] (q, k rotated) → y [B,T,Hq,hd]; query head j reads KV
    head floor(j·Hkv/Hq); scores q·k/sqrt(hd) over s ≤ t, softmax, weighted sum of v."""
    Hq, Hkv, hd = q.shape[2], k.shape[2], q.shape[3]
    idx = torch.tensor([j * Hkv // Hq for j in range(Hq)], dtype=torch.long)
    kh, vh = k[:, :, idx, :], v[:, :, idx, :]
    s = torch.einsum("bthe,bshe->bhts", q, kh) / math.sqrt(hd)
    T = q.shape[1]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, -1)
    return torch.einsum("bhts,bshe->bthe", p, vh)


def attention_mixer(u, w, n_heads, n_kv_heads, theta):
    """§4 over u [B,T,D] (positions from 0): projections, RoPE on q and k, attention, o_proj.
    w: {q_proj.weight, k_proj.weight, v_proj.weight, o_proj.weight}."""
    Bsz, T, D = u.shape
    hd = D // n_heads
    q = (u @ w["q_proj.weight"].T).reshape(Bsz, T, n_heads, hd)
    k = (u @ w["k_proj.weight"].T).reshape(Bsz, T, n_kv_heads, hd)
    v = (u @ w["v_proj.weight"].T).reshape(Bsz, T, n_kv_heads, hd)
    y = attention(rope(q, theta), rope(k, theta), v)
    return y.reshape(Bsz, T, n_heads * hd) @ w["o_proj.weight"].T


def swiglu(gate, up):
    """§5's fused gate: silu(gate)·up."""
    return F.silu(gate) * up


def swiglu_mlp(x, w):
    """§5: down_proj(silu(gate_proj(x))·up_proj(x))."""
    return swiglu(x @ w["gate_proj.weight"].T, x @ w["up_proj.weight"].T) @ w["down_proj.weight"].T
