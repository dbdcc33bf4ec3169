"""The looped model of docs/model.md §1–2 in plain float64 PyTorch over a dict of parameters named
as §6: embedding, N pre-norm residual layers (Mamba-2, attention, or attention + SwiGLU MLP)
applied R times, norm_f, the LM head (tied or not). Returns every loop step's readout and logits."""
from attention_ops import attention_mixer, swiglu_mlp
from basic_ops import embedding, rmsnorm
from ssm_ops import mamba2_mixer


def sub(params, prefix):
    """The parameters under `prefix.` with the prefix dropped."""
    n = len(prefix) + 1
    return {k[n:]: v for k, v in params.items() if k.startswith(prefix + ".")}


def layer_kind(cfg, i):
    if cfg["backbone"] == "mamba":
        return "mamba"
    if cfg["backbone"] == "transformer":
        return "attention"
    return "attention" if i in cfg["attn_layers"] else "mamba"


def apply_layer(cfg, params, i, h):
    eps = cfg["norm_eps"]
    pre = f"backbone.layers.{i}"
    x = rmsnorm(h, params[f"{pre}.norm.weight"], eps)
    mixer = sub(params, f"{pre}.mixer")
    if layer_kind(cfg, i) == "mamba":
        out, _, _ = mamba2_mixer(x, mixer, cfg["ssm"], eps)
    else:
        a = cfg["attention"]
        out = attention_mixer(x, mixer, a["n_heads"], a["n_kv_heads"], a["rope_theta"])
    h = h + out
    if cfg["backbone"] == "transformer":
        h = h + swiglu_mlp(rmsnorm(h, params[f"{pre}.mlp_norm.weight"], eps), sub(params, f"{pre}.mlp"))
    return h


def looped_forward(cfg, params, tokens):
    """tokens [B,T] (long) → (readouts, logits), lists over r = 1..R of [B,T,D] and [B,T,V]."""
    eps = cfg["norm_eps"]
    norm_f = params["backbone.norm_f.weight"]
    head = params["backbone.embeddings.weight"] if cfg["tie_embeddings"] else params["lm_head.weight"]
    h = embedding(tokens, params["backbone.embeddings.weight"])
    readouts, logits = [], []
    for _ in range(cfg["n_loops"]):
        for i in range(cfg["n_layers"]):
            h = apply_layer(cfg, params, i, h)
        if cfg["loop_norm"]:
            h = rmsnorm(h, norm_f, eps)
            readout = h
        else:
            readout = rmsnorm(h, norm_f, eps)
        readouts.append(readout)
        logits.append(readout @ head.T)
    return readouts, logits
