"""The single-op golden cases (testdata/golden/kernels/<name>.safetensors + .json): seeded float32
inputs, an upstream gradient dy, the outputs computed in float64 from those float32 inputs, and
grad.{input} = ∂ sum(y·dy)/∂input by PyTorch autograd. Each case is a function returning
(spec, tensors); generate.py writes them."""
import math

import torch

from attention_ops import attention, attention_mixer, rope, swiglu
from basic_ops import adamw_step, cross_entropy, embedding, rmsnorm
from ssm_ops import causal_conv1d, gated_rmsnorm, mamba2_decode, mamba2_mixer, mamba2_sizes
import torch.nn.functional as F

NOTE = "y and grad.* computed in float64 from the float32 inputs; grad.{input} is the gradient of sum(y * dy)"


class Draw:
    """Seeded uniform draws, rounded to float32 (what the files store) and held in float64."""

    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def u(self, shape, lo=-1.0, hi=1.0):
        x = torch.rand(shape, generator=self.g, dtype=torch.float64) * (hi - lo) + lo
        return x.to(torch.float32).to(torch.float64)

    def ints(self, shape, lo, hi):
        return torch.randint(lo, hi, shape, generator=self.g)


def differentiate(inputs, grad_names, fn, draw, dy_of="y"):
    """Run fn on the inputs (those in grad_names as leaves), draw dy for output dy_of, return
    (outputs, dy, grads) with grads of sum(outputs[dy_of]·dy)."""
    leaves = {n: (t.clone().requires_grad_(True) if n in grad_names else t) for n, t in inputs.items()}
    outs = fn(leaves)
    y = outs[dy_of]
    dy = draw.u(tuple(y.shape))
    gs = torch.autograd.grad((y * dy).sum(), [leaves[n] for n in grad_names])
    return {k: v.detach() for k, v in outs.items()}, dy, dict(zip(grad_names, gs))


def case(op, settings, formula, inputs, grad_names, fn, draw, int_inputs=(), dy_of="y"):
    outs, dy, grads = differentiate(inputs, grad_names, fn, draw, dy_of)
    spec = {
        "op": op,
        "settings": settings,
        "formula": formula,
        "inputs": {n: list(t.shape) for n, t in inputs.items()},
        "dy": list(dy.shape),
        "output": {n: list(t.shape) for n, t in outs.items()},
        "grads": {f"grad.{n}": list(g.shape) for n, g in grads.items()},
        "dtype": "F32",
        "note": NOTE,
    }
    if int_inputs:
        spec["integer_inputs"] = list(int_inputs)
        spec["note"] += "; " + ", ".join(int_inputs) + " hold exact integers stored as F32"
    if dy_of != "y" or len(outs) > 1:
        spec["dy_of"] = dy_of
    tensors = dict(inputs)
    tensors["dy"] = dy
    tensors.update(outs)
    tensors.update({f"grad.{n}": g for n, g in grads.items()})
    return spec, tensors


def ssd_scan_case():
    d = Draw(101)
    inp = {
        "x": d.u((2, 45, 4, 8)),
        "dt": d.u((2, 45, 4), 0.01, 0.5),
        "A": d.u((4,), -2.0, -0.1),
        "B": d.u((2, 45, 2, 8)),
        "C": d.u((2, 45, 2, 8)),
    }
    from ssm_ops import ssd_scan

    return case(
        "ssd-scan",
        {"n_groups": 2, "initial_state": "zeros", "D_term": False},
        "per head h (group g = floor(h*G/H)), S [P,N] zero at t=0: S_t = exp(dt_t*A_h)*S_{t-1} + dt_t*(x_t outer B_t[g]); y_t = S_t . C_t[g]; no D term; dt > 0 and A < 0 are given directly",
        inp,
        list(inp),
        lambda t: {"y": ssd_scan(t["x"], t["dt"], t["A"], t["B"], t["C"])[0]},
        d,
    )


def causal_conv1d_case():
    d = Draw(102)
    inp = {"x": d.u((2, 19, 12)), "weight": d.u((12, 4)), "bias": d.u((12,))}
    return case(
        "causal-conv1d",
        {"activation": None},
        "y[b,t,c] = bias[c] + sum_{k=0..K-1} weight[c,k] * x[b,t-K+1+k,c], x = 0 before t = 0 (depthwise, no activation)",
        inp,
        list(inp),
        lambda t: {"y": causal_conv1d(t["x"], t["weight"], t["bias"])},
        d,
    )


def conv1d_silu_case():
    d = Draw(103)
    inp = {
        "x": d.u((2, 13, 20)),
        "weight": d.u((20, 4)),
        "bias": d.u((20,)),
        "initial_state": d.u((2, 20, 3)),
    }
    return case(
        "conv1d-silu",
        {"activation": "silu", "widths": [8, 6, 6]},
        "y = silu(conv(x)), conv as causal-conv1d but with initial_state [B,C,K-1] (the K-1 inputs before t = 0, oldest first) instead of zeros; the model splits y along channels into pieces of `widths` (x, B, C of model.md 3.3); y here is the unsplit [B,T,C]",
        inp,
        list(inp),
        lambda t: {"y": F.silu(causal_conv1d(t["x"], t["weight"], t["bias"], t["initial_state"]))},
        d,
    )


def gated_rmsnorm_case():
    d = Draw(104)
    inp = {"x": d.u((2, 11, 32), -2, 2), "z": d.u((2, 11, 32), -3, 3), "weight": d.u((32,), 0.5, 1.5)}
    return case(
        "gated-rmsnorm",
        {"n_groups": 2, "eps": 1e-5},
        "v = x * silu(z); for each of the n_groups contiguous groups of Di/n_groups channels: v_g / sqrt(mean(v_g^2) + eps); then * weight.  (The input called y in model.md 3.6 is named x here so that the output can be y.)",
        inp,
        list(inp),
        lambda t: {"y": gated_rmsnorm(t["x"], t["z"], t["weight"], 2, 1e-5)},
        d,
    )


def rmsnorm_case():
    d = Draw(105)
    inp = {"x": d.u((3, 7, 24), -2, 2), "weight": d.u((24,), 0.5, 1.5)}
    return case(
        "rmsnorm",
        {"eps": 1e-5},
        "y = x / sqrt(mean(x^2 over the last axis) + eps) * weight (model.md 2)",
        inp,
        list(inp),
        lambda t: {"y": rmsnorm(t["x"], t["weight"], 1e-5)},
        d,
    )


def attention_case():
    d = Draw(106)
    inp = {"q": d.u((2, 17, 4, 8), -2, 2), "k": d.u((2, 17, 2, 8), -2, 2), "v": d.u((2, 17, 2, 8))}
    return case(
        "attention",
        {"causal": True, "scale": 1 / math.sqrt(8), "scale_formula": "1/sqrt(hd)", "n_heads": 4, "n_kv_heads": 2, "head_dim": 8},
        "q, k already rotated; query head j uses kv head floor(j*Hkv/Hq); y[t,j] = softmax_s<=t(q[t,j].k[s,kv]/sqrt(hd)) . v[s,kv]",
        inp,
        list(inp),
        lambda t: {"y": attention(t["q"], t["k"], t["v"])},
        d,
    )


def rope_case():
    d = Draw(107)
    inp = {"x": d.u((2, 40, 3, 8))}
    return case(
        "rope",
        {"theta": 10000.0, "layout": "rotate-half", "position_offset": 0},
        "positions p = 0..T-1; for i < hd/2, theta_i = theta^(-2i/hd): y_i = x_i cos(p theta_i) - x_{i+hd/2} sin(p theta_i), y_{i+hd/2} = x_i sin(p theta_i) + x_{i+hd/2} cos(p theta_i)",
        inp,
        list(inp),
        lambda t: {"y": rope(t["x"], 10000.0)},
        d,
    )


def swiglu_case():
    d = Draw(108)
    inp = {"gate": d.u((2, 9, 24), -4, 4), "up": d.u((2, 9, 24), -2, 2)}
    return case(
        "swiglu",
        {},
        "y = silu(gate) * up (model.md 5)",
        inp,
        list(inp),
        lambda t: {"y": swiglu(t["gate"], t["up"])},
        d,
    )


def cross_entropy_case():
    d = Draw(109)
    targets = d.ints((2, 13), 0, 17)
    ignore = torch.rand((2, 13), generator=d.g) < 0.3
    targets[ignore] = -100
    inp = {"logits": d.u((2, 13, 17), -4, 4), "targets": targets.to(torch.float64)}
    return case(
        "cross-entropy",
        {"ignore_index": -100, "reduction": "mean over the targets that are not ignore_index"},
        "loss = mean over positions with targets != -100 of (logsumexp(logits[b,t,:]) - logits[b,t,targets[b,t]]) (model.md 1); output y has shape [1]",
        inp,
        ["logits"],
        lambda t: {"y": cross_entropy(t["logits"], t["targets"].to(torch.long))},
        d,
        int_inputs=("targets",),
    )


def embedding_case():
    d = Draw(110)
    inp = {"ids": d.ints((2, 15), 0, 11).to(torch.float64), "weight": d.u((11, 16))}
    return case(
        "embedding",
        {},
        "y[b,t,:] = weight[ids[b,t], :]; grad.weight sums dy over repeated ids (rows never looked up get 0)",
        inp,
        ["weight"],
        lambda t: {"y": embedding(t["ids"].to(torch.long), t["weight"])},
        d,
        int_inputs=("ids",),
    )


ADAMW = {"lr": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1, "steps": 3}


def adamw_case():
    """Three AdamW steps from zero moments on a decayed matrix w and an undecayed vector b, with
    gradients of mixed magnitudes (some far below eps·sqrt, some large)."""
    d = Draw(111)
    h = ADAMW
    params = {"w": (d.u((5, 7)), True), "b": (d.u((7,)), False)}
    tensors = {}
    for n, (p, _) in params.items():
        tensors[n] = p
    grads = {}
    for s in range(1, h["steps"] + 1):
        for n, (p, _) in params.items():
            mag = 10.0 ** d.u(tuple(p.shape), -9, 1)
            grads[(n, s)] = (mag * torch.sign(d.u(tuple(p.shape)))).to(torch.float32).to(torch.float64)
            tensors[f"g.{n}.step{s}"] = grads[(n, s)]
    outs = {}
    for n, (p, decay) in params.items():
        m = torch.zeros_like(p)
        v = torch.zeros_like(p)
        ref = torch.nn.Parameter(p.clone())
        opt = torch.optim.AdamW(
            [ref], lr=h["lr"], betas=(h["beta1"], h["beta2"]), eps=h["eps"], weight_decay=h["weight_decay"] if decay else 0.0
        )
        for s in range(1, h["steps"] + 1):
            p, m, v = adamw_step(p, grads[(n, s)], m, v, s, h["lr"], h["beta1"], h["beta2"], h["eps"], h["weight_decay"], decay)
            outs[f"{n}.step{s}"] = p
            ref.grad = grads[(n, s)].clone()
            opt.step()
            # The hand-written update is torch.optim.AdamW's (float64, rounding level).
            assert torch.allclose(ref.detach(), p, rtol=1e-12, atol=1e-14), (n, s)
        outs[f"m.{n}"] = m
        outs[f"v.{n}"] = v
    spec = {
        "op": "adamw",
        "settings": {**h, "decay": {n: decay for n, (_, decay) in params.items()}},
        "formula": "per step t = 1..steps from m = v = 0: p <- p*(1 - lr*weight_decay) (decay only); m <- beta1*m + (1-beta1)*g; v <- beta2*v + (1-beta2)*g^2; p <- p - lr*(m/(1-beta1^t)) / (sqrt(v/(1-beta2^t)) + eps)  (torch.optim.AdamW)",
        "inputs": {n: list(t.shape) for n, t in tensors.items()},
        "output": {n: list(t.shape) for n, t in outs.items()},
        "dtype": "F32",
        "note": "{p}.step{s}: the parameter after step s; m.{p}, v.{p}: the moments after the last step; g.{p}.step{s}: the gradient applied at step s; computed in float64 from the float32 inputs and checked against torch.optim.AdamW",
    }
    tensors.update(outs)
    return spec, tensors


MAMBA2 = {"d_model": 16, "norm_eps": 1e-5, "ssm": {"d_state": 8, "headdim": 8, "expand": 2, "n_groups": 2, "d_conv": 4, "chunk_size": 8}}


def mamba2_weights(d):
    """A Mamba-2 mixer's parameters (model.md 6 names under mixer.), drawn like a trained mixer:
    dt_bias so that softplus gives steps in [1e-3, 1e-1]·several, A_log = ln U[1, 16]."""
    D = MAMBA2["d_model"]
    Di, H, P, N, G, K, Dc = mamba2_sizes(MAMBA2["ssm"], D)
    dt0 = torch.exp(d.u((H,), math.log(1e-2), math.log(0.5)))
    return {
        "in_proj.weight": d.u((2 * Di + 2 * G * N + H, D), -0.5, 0.5),
        "conv1d.weight": d.u((Dc, 1, K), -0.5, 0.5),
        "conv1d.bias": d.u((Dc,), -0.2, 0.2),
        "dt_bias": (dt0 + torch.log(-torch.expm1(-dt0))).to(torch.float32).to(torch.float64),
        "A_log": torch.log(d.u((H,), 1, 16)).to(torch.float32).to(torch.float64),
        "D": d.u((H,), 0.5, 1.5),
        "norm.weight": d.u((Di,), 0.5, 1.5),
        "out_proj.weight": d.u((D, Di), -0.3, 0.3),
    }


def mamba2_state(d, B):
    D = MAMBA2["d_model"]
    Di, H, P, N, G, K, Dc = mamba2_sizes(MAMBA2["ssm"], D)
    return {"conv_state": d.u((B, Dc, K - 1), -1, 1), "ssm_state": d.u((B, H, P, N), -0.5, 0.5)}


MAMBA2_FORMULA = "model.md 3.1-3.7 for one Mamba-2 mixer (no pre-norm, no residual) over u from the decode state (conv_state [B,Dc,K-1] = the last K-1 pre-conv xBC inputs, oldest first; ssm_state [B,H,P,N]); outputs conv_state.out, ssm_state.out: the states after the last token"


# Hugging Face's time_step_limit, set so that the drawn weights give steps on both sides of it
MAMBA2_DT_LIMIT = {**MAMBA2, "ssm": {**MAMBA2["ssm"], "time_step_limit": [0.02, 0.08]}}
# the gated norm over all of d_inner (transformers' PyTorch path) instead of per group
MAMBA2_NORM_WHOLE = {**MAMBA2, "ssm": {**MAMBA2["ssm"], "norm_groups": "whole"}}


def dt_sides(d, settings, u, w, st):
    """Assert that some steps fall below and some above the case's limit (else it tests nothing)."""
    lo, hi = settings["ssm"]["time_step_limit"]
    D = settings["d_model"]
    Di, H, P, N, G, K, Dc = mamba2_sizes(settings["ssm"], D)
    dt = F.softplus((u @ w["in_proj.weight"].T)[..., Di + Dc :] + w["dt_bias"])
    assert (dt < lo).any() and (dt > hi).any(), "the dt limit case must clamp on both sides"


def mamba2_step_case(name="mamba2-step", settings=MAMBA2, seed=112, T=5):
    """Decoding: T tokens one at a time through the recurrent step. Inference only: no gradients."""
    d = Draw(seed)
    w = mamba2_weights(d)
    st = mamba2_state(d, 2)
    u = d.u((2, T, settings["d_model"]))
    if "time_step_limit" in settings["ssm"]:
        dt_sides(d, settings, u, w, st)
    y, conv, ssm = mamba2_decode(u, w, settings["ssm"], settings["norm_eps"], st["conv_state"], st["ssm_state"])
    # model.md 3 "Decoding state": the whole sequence at once leaves the same outputs and states.
    whole = mamba2_mixer(u, w, settings["ssm"], settings["norm_eps"], st["conv_state"], st["ssm_state"])
    for a, b in zip((y, conv, ssm), whole):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-12)
    tensors = {"u": u, **st, **w, "y": y, "conv_state.out": conv, "ssm_state.out": ssm}
    spec = {
        "op": name,
        "settings": settings,
        "formula": MAMBA2_FORMULA + settings_note(settings) + "; the T tokens of u enter one at a time (T decode steps), y[:, t] is step t's output",
        "inputs": {n: list(t.shape) for n, t in {"u": u, **st, **w}.items()},
        "output": {"y": list(y.shape), "conv_state.out": list(conv.shape), "ssm_state.out": list(ssm.shape)},
        "dtype": "F32",
        "note": "computed in float64 from the float32 inputs; the decode step is inference only (no gradients)",
    }
    return spec, tensors


MAMBA2_SETTINGS_NOTE = "; ssm.time_step_limit [lo, hi], where set: dt = clamp(softplus(dt + dt_bias), lo, hi) (lo, hi as float32; the gradient zero outside, as torch.clamp); ssm.norm_groups \"whole\", where set: the gated RMSNorm over all of d_inner instead of per group of d_inner/n_groups"


def settings_note(settings):
    """What the Hugging Face settings of a case mean (nothing for the plain cases)."""
    return "" if settings is MAMBA2 else MAMBA2_SETTINGS_NOTE


def mamba2_prefill_case(name="mamba2-prefill", settings=MAMBA2, seed=113, T=19):
    """Prefill: a prompt through the mixer at once from a carried state; gradients of sum(y·dy)."""
    d = Draw(seed)
    w = mamba2_weights(d)
    st = mamba2_state(d, 2)
    inp = {"u": d.u((2, T, settings["d_model"])), **st, **w}
    if "time_step_limit" in settings["ssm"]:
        dt_sides(d, settings, inp["u"], w, st)

    def fn(t):
        y, conv, ssm = mamba2_mixer(t["u"], {k: t[k] for k in w}, settings["ssm"], settings["norm_eps"], t["conv_state"], t["ssm_state"])
        return {"y": y, "conv_state.out": conv, "ssm_state.out": ssm}

    return case(
        name,
        settings,
        MAMBA2_FORMULA + settings_note(settings) + "; the whole prompt at once (the chunked scan in training code)",
        inp,
        ["u", *w],
        fn,
        d,
    )


ATTN = {"d_model": 32, "n_heads": 4, "n_kv_heads": 2, "rope_theta": 10000.0, "prompt": 6}


def attention_decode_case():
    """The attention mixer over T tokens: what a prompt of `prompt` tokens into an empty KV cache
    followed by one-token decode steps must produce (positions 0..T-1), with the gradients of
    the full causal forward."""
    d = Draw(114)
    D = ATTN["d_model"]
    hd = D // ATTN["n_heads"]
    inp = {
        "u": d.u((2, 11, D), -2, 2),
        "q_proj.weight": d.u((ATTN["n_heads"] * hd, D), -0.4, 0.4),
        "k_proj.weight": d.u((ATTN["n_kv_heads"] * hd, D), -0.4, 0.4),
        "v_proj.weight": d.u((ATTN["n_kv_heads"] * hd, D), -0.4, 0.4),
        "o_proj.weight": d.u((D, ATTN["n_heads"] * hd), -0.3, 0.3),
    }
    return case(
        "attention-decode",
        ATTN,
        "model.md 4 for one attention mixer (no pre-norm, no residual): q, k, v projections, RoPE at positions 0..T-1, causal GQA softmax attention, o_proj; decoding the first `prompt` tokens as a prompt into an empty KV cache and the rest one token at a time gives the same y",
        inp,
        list(inp),
        lambda t: {"y": attention_mixer(t["u"], t, ATTN["n_heads"], ATTN["n_kv_heads"], ATTN["rope_theta"])},
        d,
    )


KERNEL_CASES = {
    "ssd-scan": ssd_scan_case,
    "causal-conv1d": causal_conv1d_case,
    "conv1d-silu": conv1d_silu_case,
    "gated-rmsnorm": gated_rmsnorm_case,
    "rmsnorm": rmsnorm_case,
    "attention": attention_case,
    "rope": rope_case,
    "swiglu": swiglu_case,
    "cross-entropy": cross_entropy_case,
    "embedding": embedding_case,
    "adamw": adamw_case,
    "mamba2-step": mamba2_step_case,
    "mamba2-prefill": mamba2_prefill_case,
    "mamba2-step-dt-limit": lambda: mamba2_step_case("mamba2-step-dt-limit", MAMBA2_DT_LIMIT, 115, 4),
    "mamba2-prefill-dt-limit": lambda: mamba2_prefill_case("mamba2-prefill-dt-limit", MAMBA2_DT_LIMIT, 116, 11),
    "mamba2-prefill-norm-whole": lambda: mamba2_prefill_case("mamba2-prefill-norm-whole", MAMBA2_NORM_WHOLE, 117, 11),
    "attention-decode": attention_decode_case,
}
