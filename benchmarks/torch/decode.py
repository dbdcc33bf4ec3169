"""PyTorch (eager) step function of the looped Mamba-2 model of model.py, for recurrent
decoding as @loop/looped `decodeStep` does it: one state per (loop step, layer) — the conv
window (the last d_conv − 1 inputs of the conv) and the SSM state [B, H, P, N] — and, per new
token, R loop steps through the N layers, then the final-step logits and a greedy pick.

Usage: decode.py '{"config": {...model.py config, mamba only}, "threads": 1, "batch": 8,
                   "prompt": 16, "new": 64, "reps": 3}'
Prints one JSON line: {"torch": version, "seconds": median wall seconds for `new` tokens after
the prompt (fed one token at a time, as looplm generate does), "samples": [...]}.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import Looped, rmsnorm  # noqa: E402


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
    model = Looped(c, 64, g)
    b, prompt, new = int(args["batch"]), int(args["prompt"]), int(args["new"])
    tokens = torch.randint(0, c["vocab"], (b, prompt), generator=g)
    samples = []
    with torch.no_grad():
        for _ in range(1 + int(args.get("reps", 3))):  # the first is the warm-up
            states = [[init_state(m, b) for m in model.mixers] for _ in range(model.loops)]
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
