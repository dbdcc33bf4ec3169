"""PyTorch (eager) step function of the looped Mamba-2 model of model.py, for recurrent
decoding as @loop/looped `decodeStep` does it: one state per (loop step, layer) — the conv
window (the last d_conv − 1 inputs of the conv) and the SSM state [B, H, P, N] — and, per new
token, R loop steps through the N layers, then the final-step logits and a greedy pick.

With "prefill": T (batch 1), times a T-token prompt instead: chunked (model.py's Mamba2.forward
per layer, the chunked SSD scan, keeping each layer's final conv window and SSM state, as
@loop/looped `prefill` does) and one step at a time; checks that both leave the same logits and
states (the next step's logits agree).

Usage: decode.py '{"config": {...model.py config, mamba only}, "threads": 1, "batch": 8,
                   "prompt": 16, "new": 64, "reps": 3}'
       decode.py '{"config": {...}, "threads": 1, "prefill": 256, "reps": 3}'
Prints one JSON line: {"torch": version, "seconds": median wall seconds for `new` tokens after
the prompt (fed one token at a time), "samples": [...]}; with "prefill": {"torch": version,
"prefill_seconds": median wall seconds of the chunked prompt, "step_seconds": of the prompt one
token at a time, "max_rel_diff": of the next logits after each}.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Looped, rmsnorm, ssd_padded  # noqa: E402


def init_state(m, b):
    return {
        "conv": torch.zeros(b, m.conv_dim, m.k - 1),
        "ssm": torch.zeros(b, m.h, m.p, m.n),
    }


def mamba_step(m, u, st):
    """One token of Mamba2.forward (model.py) for u [B, D], advancing st in place."""
    b = u.shape[0]
    z, xbc, dt = torch.split(u @ m.in_proj.t(), [m.di, m.conv_dim, m.h], dim=-1)
    window = torch.cat([st["conv"], xbc[:, :, None]], dim=-1)  # [B, C, d_conv]
    st["conv"] = window[:, :, 1:]
    xbc = F.silu((window * m.conv_w[:, 0, :]).sum(-1) + m.conv_b)
    x, bm, cm = torch.split(xbc, [m.di, m.n, m.n], dim=-1)
    dt = F.softplus(dt + m.dt_bias)  # [B, H]
    da = torch.exp(dt * -torch.exp(m.a_log))
    xh = x.view(b, m.h, m.p)
    st["ssm"] = st["ssm"] * da[:, :, None, None] + (dt[:, :, None] * xh)[..., None] * bm[:, None, None, :]
    y = (st["ssm"] @ cm[:, None, :, None]).squeeze(-1) + m.d[:, None] * xh
    y = rmsnorm(y.reshape(b, m.di) * F.silu(z), m.norm_w)
    return y @ m.out_proj.t()


def mamba_prefill(m, u, st):
    """Mamba2.forward (model.py) for u [B, T, D] from a zero state, leaving st where T calls of
    mamba_step would: the last d_conv − 1 conv inputs and the scan's final state."""
    b, t, _ = u.shape
    z, xbc_in, dt = torch.split(u @ m.in_proj.t(), [m.di, m.conv_dim, m.h], dim=-1)
    xbc_t = xbc_in.transpose(1, 2)  # [B, C, T]
    st["conv"] = F.pad(xbc_t, (m.k - 1, 0))[..., -(m.k - 1):].contiguous()
    xbc = F.conv1d(xbc_t, m.conv_w, m.conv_b, padding=m.k - 1, groups=m.conv_dim)
    xbc = F.silu(xbc[..., :t].transpose(1, 2))
    x, bm, cm = torch.split(xbc, [m.di, m.n, m.n], dim=-1)
    dt = F.softplus(dt + m.dt_bias)
    xh = x.reshape(b, t, m.h, m.p)
    y, st["ssm"] = ssd_padded(xh, dt, -torch.exp(m.a_log), bm, cm, m.chunk)
    y = rmsnorm((y + m.d[:, None] * xh).reshape(b, t, m.di) * F.silu(z), m.norm_w)
    return y @ m.out_proj.t()


def prefill(model, states, tokens):
    """The prompt tokens [B, T] through every loop step at once; the last position's logits."""
    h = F.embedding(tokens, model.emb)
    for r in range(model.loops):
        for i, (norm, mixer) in enumerate(zip(model.norms, model.mixers)):
            h = h + mamba_prefill(mixer, rmsnorm(h, norm), states[r][i])
    return rmsnorm(h[:, -1], model.norm_f) @ model.emb.t()


def new_states(model, b):
    return [[init_state(m, b) for m in model.mixers] for _ in range(model.loops)]


def time_prefill(model, c, t, reps):
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, c["vocab"], (1, t), generator=g)

    def stepped(states):
        for i in range(t):
            logits = decode_step(model, states, tokens[:, i])
        return logits

    def timed(fn):
        samples = []
        for _ in range(1 + reps):  # the first is the warm-up
            states = new_states(model, 1)
            t0 = time.perf_counter()
            fn(states)
            samples.append(time.perf_counter() - t0)
        return sorted(samples[1:])[reps // 2]

    with torch.no_grad():
        chunked_s = timed(lambda s: prefill(model, s, tokens))
        step_s = timed(stepped)
        a, b = new_states(model, 1), new_states(model, 1)
        prefill(model, a, tokens)
        stepped(b)
        nxt = tokens[:, :1]
        la, lb = decode_step(model, a, nxt[:, 0]), decode_step(model, b, nxt[:, 0])
        diff = ((la - lb).abs().max() / lb.abs().max()).item()
    if diff > 1e-4:
        raise SystemExit(f"decode.py: chunked prefill and steps disagree (max rel diff {diff})")
    return {"torch": torch.__version__, "prefill_seconds": chunked_s, "step_seconds": step_s,
            "max_rel_diff": diff}


def decode_step(model, states, ids):
    h = F.embedding(ids, model.emb)
    for r in range(model.loops):
        for i, (norm, mixer) in enumerate(zip(model.norms, model.mixers)):
            h = h + mamba_step(mixer, rmsnorm(h, norm), states[r][i])
    return rmsnorm(h, model.norm_f) @ model.emb.t()


def main():
    args = json.loads(sys.argv[1])
    c = args["config"]
    if c.get("attn_layers"):
        raise SystemExit("decode.py: Mamba-2 layers only")
    torch.set_num_threads(int(args["threads"]))
    g = torch.Generator().manual_seed(0)
    model = Looped(c, int(args.get("chunk", 64)), g)
    if "prefill" in args:
        print(json.dumps(time_prefill(model, c, int(args["prefill"]), int(args.get("reps", 3)))))
        return
    b, prompt, new = int(args["batch"]), int(args["prompt"]), int(args["new"])
    tokens = torch.randint(0, c["vocab"], (b, prompt), generator=g)
    samples = []
    with torch.no_grad():
        for _ in range(1 + int(args.get("reps", 3))):  # the first is the warm-up
            states = new_states(model, b)
            for t in range(prompt):
                logits = decode_step(model, states, tokens[:, t])
            t0 = time.perf_counter()
            for _ in range(new):
                logits = decode_step(model, states, logits.argmax(-1))
            samples.append(time.perf_counter() - t0)
    samples = sorted(samples[1:])
    print(json.dumps({"torch": torch.__version__, "seconds": samples[len(samples) // 2], "samples": samples}))


if __name__ == "__main__":
    main()
