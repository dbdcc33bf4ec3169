"""The Mamba-2 pieces of docs/model.md §3 in plain float64 PyTorch, written from the text: the SSD
recurrence as the sequential loop of §3.5 (one token at a time, no chunking), the causal depthwise
convolution of §3.2 as a sum of shifted copies, the gated grouped RMSNorm of §3.6, and the whole
mixer with its decode state (conv_state, ssm_state) carried in and out."""
import torch
import torch.nn.functional as F


def group_of_heads(H, G):
    """Head h reads group floor(h·G/H) (§3)."""
    return torch.tensor([h * G // H for h in range(H)], dtype=torch.long)


def ssd_scan(x, dt, A, Bm, Cm, D=None, state=None):
    """x [B,T,H,P], dt [B,T,H] (already positive), A [H] (negative), Bm, Cm [B,T,G,N],
    D [H] or None, state [B,H,P,N] or None (zeros) → y [B,T,H,P], final state [B,H,P,N].
    S_t = exp(dt_t·A)·S_{t−1} + dt_t·(x_t ⊗ B_t);  y_t = S_t·C_t (+ D·x_t)."""
    Bsz, T, H, P = x.shape
    G, N = Bm.shape[2], Bm.shape[3]
    idx = group_of_heads(H, G)
    Bh = Bm[:, :, idx, :]  # [B,T,H,N]
    Ch = Cm[:, :, idx, :]
    S = torch.zeros(Bsz, H, P, N, dtype=x.dtype) if state is None else state
    ys = []
    for t in range(T):
        decay = torch.exp(dt[:, t, :] * A)[:, :, None, None]
        inject = dt[:, t, :, None, None] * x[:, t, :, :, None] * Bh[:, t, :, None, :]
        S = decay * S + inject
        y = (S * Ch[:, t, :, None, :]).sum(-1)
        if D is not None:
            y = y + D[None, :, None] * x[:, t]
        ys.append(y)
    return torch.stack(ys, 1), S


def causal_conv1d(x, weight, bias, init=None):
    """x [B,T,C], weight [C,K], bias [C] or None, init [B,C,K−1] (the K−1 inputs before t = 0,
    oldest first) or None (zeros) → y [B,T,C]:
    y[t,c] = bias[c] + Σ_k weight[c,k]·x[t−K+1+k, c]."""
    Bsz, T, C = x.shape
    K = weight.shape[1]
    before = torch.zeros(Bsz, K - 1, C, dtype=x.dtype) if init is None else init.transpose(1, 2)
    xp = torch.cat([before, x], 1)  # xp[t + K − 1] = x[t]
    y = sum(weight[:, k] * xp[:, k : k + T, :] for k in range(K))
    if bias is not None:
        y = y + bias
    return y


def conv_tail(x, init, K):
    """The conv state after x: its last K−1 inputs, oldest first, [B,C,K−1] (init before t = 0)."""
    Bsz, T, C = x.shape
    before = torch.zeros(Bsz, K - 1, C, dtype=x.dtype) if init is None else init.transpose(1, 2)
    return torch.cat([before, x], 1)[:, -(K - 1) :, :].transpose(1, 2)


def gated_rmsnorm(x, z, weight, n_groups, eps):
    """v = x·silu(z); each of n_groups contiguous channel groups scaled by 1/sqrt(mean(v²) + eps);
    times weight (§3.6)."""
    v = x * F.silu(z)
    shape = v.shape
    vg = v.reshape(*shape[:-1], n_groups, shape[-1] // n_groups)
    vg = vg * torch.rsqrt(vg.pow(2).mean(-1, keepdim=True) + eps)
    return vg.reshape(shape) * weight


def mamba2_sizes(cfg, D):
    """Di, H, P, N, G, K, Dc from a config's ssm block (§3) and d_model D."""
    s = cfg
    Di = s["expand"] * D
    P = s["headdim"]
    H = Di // P
    N, G, K = s["d_state"], s["n_groups"], s["d_conv"]
    return Di, H, P, N, G, K, Di + 2 * G * N


def clamp_dt(dt, limit):
    """dt clamped to [lo, hi] (the time_step_limit of Hugging Face's and mamba_ssm's Mamba-2,
    applied after the softplus), the limits as float32 values; None: no clamp."""
    if limit is None:
        return dt
    lo, hi = (float(torch.tensor(v, dtype=torch.float32)) for v in limit)
    return torch.clamp(dt, lo, hi)


def norm_group_count(ssm_cfg):
    """The groups the gated norm takes its RMS over: n_groups (per B/C group, as mamba_ssm), or 1
    with norm_groups "whole" (over all of d_inner, as transformers' PyTorch path)."""
    return 1 if ssm_cfg.get("norm_groups") == "whole" else ssm_cfg["n_groups"]


def mamba2_mixer(u, w, ssm_cfg, eps, conv_state=None, ssm_state=None):
    """The Mamba-2 mixer of §3.1–3.7 over u [B,T,D] from the given decode state (zeros when
    None). w: {in_proj.weight, conv1d.weight [Dc,1,K], conv1d.bias, dt_bias, A_log, D,
    norm.weight, out_proj.weight}. ssm_cfg may hold time_step_limit [lo, hi] (dt clamped after
    the softplus) and norm_groups ("whole": the gated norm over all of d_inner). Returns out
    [B,T,D], conv_state [B,Dc,K−1], ssm_state [B,H,P,N] after the last token."""
    Bsz, T, D = u.shape
    Di, H, P, N, G, K, Dc = mamba2_sizes(ssm_cfg, D)
    zxbcdt = u @ w["in_proj.weight"].T
    z, xBC, dt = zxbcdt[..., :Di], zxbcdt[..., Di : Di + Dc], zxbcdt[..., Di + Dc :]
    conv = causal_conv1d(xBC, w["conv1d.weight"].reshape(Dc, K), w["conv1d.bias"], conv_state)
    new_conv_state = conv_tail(xBC, conv_state, K)
    xBC = F.silu(conv)
    x = xBC[..., :Di].reshape(Bsz, T, H, P)
    Bm = xBC[..., Di : Di + G * N].reshape(Bsz, T, G, N)
    Cm = xBC[..., Di + G * N :].reshape(Bsz, T, G, N)
    dt = clamp_dt(F.softplus(dt + w["dt_bias"]), ssm_cfg.get("time_step_limit"))
    A = -torch.exp(w["A_log"])
    y, S = ssd_scan(x, dt, A, Bm, Cm, w["D"], ssm_state)
    y = gated_rmsnorm(y.reshape(Bsz, T, Di), z, w["norm.weight"], norm_group_count(ssm_cfg), eps)
    return y @ w["out_proj.weight"].T, new_conv_state, S


def mamba2_decode(u, w, ssm_cfg, eps, conv_state, ssm_state):
    """Token-by-token decoding: the mixer applied to one token at a time, each step starting from
    the state the previous one left. Returns the stacked outputs [B,T,D] and the final states."""
    outs = []
    for t in range(u.shape[1]):
        o, conv_state, ssm_state = mamba2_mixer(u[:, t : t + 1], w, ssm_cfg, eps, conv_state, ssm_state)
        outs.append(o)
    return torch.cat(outs, 1), conv_state, ssm_state
