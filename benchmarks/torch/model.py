"""PyTorch (eager) transcription of the looped model, timed for whole training steps:
forward + backward + AdamW, the same model as @loop/looped (docs/model.md §1-§4):
embedding, pre-norm residual layers (Mamba-2 or attention mixer) looped R times, norm_f, tied
LM head, mean cross-entropy of the final loop's logits.

Mamba-2 mixer (§3): in_proj split z / xBC / dt, depthwise causal conv1d + SiLU, softplus dt,
chunked SSD (the transcription in ssd.py; n_groups = 1), D skip, gated grouped RMSNorm, out_proj.
Attention mixer (§4): q/k/v projections, rotate-half RoPE, GQA, causal softmax, o_proj.

Usage: model.py '{"configs": [{"name": "...", "backbone": "mamba", "d_model": 64,
                  "n_layers": 1, "n_loops": 12, "d_state": 16, "headdim": 16, "vocab": 32,
                  "batch": 32, "seq": 256, "attn_layers": [], "heads": 4}],
                  "chunk": 64, "threads": [1, 2], "warmup": 1, "reps": 3}'
Optional: "device": "cuda" (the model, the batch and every tensor made in the forward on the
GPU) and "autocast": "bf16" (the forward under torch.autocast, bf16; weights and optimiser fp32),
the PyTorch side of the CUDA backend's step timings (tools/cuda-first-run/step-time.ts).
Prints one JSON line: {"torch": version, "results": [{"name", "threads", "seconds",
"cpu_seconds", "tokens_per_s", "samples", "cpu_samples"}]} (median over reps after warm-up; the
samples are every timed step's wall and CPU seconds).
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ssd import ssd_chunked  # noqa: E402
from timing import wall_and_cpu  # noqa: E402

EPS = 1e-5


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * w


def uniform(shape, bound, g):
    return (torch.rand(*shape, generator=g) * 2 - 1) * bound


def ssd_padded(x, dt, a, b, c, chunk):
    """ssd_chunked for any T, as @loop/ssm-kernels chunks it: chunks of min(chunk, T) and a
    shorter last one, here zero-padded (dt = 0 at the padding: no decay, no input; the scan is
    causal, so the real positions are unchanged, and so is the final state). Returns y and the
    state after the last position."""
    t = x.shape[1]
    chunk = min(chunk, t)
    pad = -t % chunk
    if pad:
        x = F.pad(x, (0, 0, 0, 0, 0, pad))
        dt = F.pad(dt, (0, 0, 0, pad))
        b = F.pad(b, (0, 0, 0, pad))
        c = F.pad(c, (0, 0, 0, pad))
    y, final = ssd_chunked(x, dt, a, b, c, chunk)
    return y[:, :t], final


class Mamba2(torch.nn.Module):
    def __init__(self, d, n_state, headdim, n_layers, chunk, g, expand=2, d_conv=4):
        super().__init__()
        di = expand * d
        self.di, self.h, self.p, self.n, self.k, self.chunk = di, di // headdim, headdim, n_state, d_conv, chunk
        self.conv_dim = di + 2 * n_state
        self.in_proj = torch.nn.Parameter(uniform((2 * di + 2 * n_state + self.h, d), 1 / math.sqrt(d), g))
        self.conv_w = torch.nn.Parameter(uniform((self.conv_dim, 1, d_conv), 1 / math.sqrt(d_conv), g))
        self.conv_b = torch.nn.Parameter(torch.zeros(self.conv_dim))
        dt0 = torch.exp(torch.rand(self.h, generator=g) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        dt0 = dt0.clamp(min=1e-4)
        self.dt_bias = torch.nn.Parameter(dt0 + torch.log(-torch.expm1(-dt0)))
        self.a_log = torch.nn.Parameter(torch.log(1 + 15 * torch.rand(self.h, generator=g)))
        self.d = torch.nn.Parameter(torch.ones(self.h))
        self.norm_w = torch.nn.Parameter(torch.ones(di))
        self.out_proj = torch.nn.Parameter(uniform((d, di), 1 / math.sqrt(di) / math.sqrt(n_layers), g))

    def no_decay(self):
        return [self.conv_b, self.dt_bias, self.a_log, self.d, self.norm_w]

    def forward(self, u):
        b, t, _ = u.shape
        zxbcdt = u @ self.in_proj.t()
        z, xbc, dt = torch.split(zxbcdt, [self.di, self.conv_dim, self.h], dim=-1)
        xbc = F.conv1d(xbc.transpose(1, 2), self.conv_w, self.conv_b, padding=self.k - 1, groups=self.conv_dim)
        xbc = F.silu(xbc[..., :t].transpose(1, 2))
        x, bm, cm = torch.split(xbc, [self.di, self.n, self.n], dim=-1)
        dt = F.softplus(dt + self.dt_bias)
        a = -torch.exp(self.a_log)
        xh = x.reshape(b, t, self.h, self.p)
        y, _ = ssd_padded(xh, dt, a, bm, cm, self.chunk)
        y = (y + self.d[:, None] * xh).reshape(b, t, self.di)
        y = rmsnorm(y * F.silu(z), self.norm_w)
        return y @ self.out_proj.t()


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Attention(torch.nn.Module):
    def __init__(self, d, heads, kv_heads, n_layers, g, theta=10000.0):
        super().__init__()
        self.hq, self.hkv, self.hd = heads, kv_heads, d // heads
        bound = 1 / math.sqrt(d)
        self.q = torch.nn.Parameter(uniform((heads * self.hd, d), bound, g))
        self.k = torch.nn.Parameter(uniform((kv_heads * self.hd, d), bound, g))
        self.v = torch.nn.Parameter(uniform((kv_heads * self.hd, d), bound, g))
        self.o = torch.nn.Parameter(uniform((d, heads * self.hd), bound / math.sqrt(n_layers), g))
        self.theta = theta

    def no_decay(self):
        return []

    def forward(self, u):
        b, t, _ = u.shape
        q = (u @ self.q.t()).view(b, t, self.hq, self.hd).transpose(1, 2)
        k = (u @ self.k.t()).view(b, t, self.hkv, self.hd).transpose(1, 2)
        v = (u @ self.v.t()).view(b, t, self.hkv, self.hd).transpose(1, 2)
        half = self.hd // 2
        freq = self.theta ** (-torch.arange(half, dtype=torch.float32) * 2 / self.hd)
        ang = torch.arange(t, dtype=torch.float32)[:, None] * freq[None, :]
        cos, sin = torch.cos(ang), torch.sin(ang)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        rep = self.hq // self.hkv
        if rep > 1:
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, -torch.inf)
        o = torch.softmax(s, dim=-1) @ v
        return o.transpose(1, 2).reshape(b, t, self.hq * self.hd) @ self.o.t()


class Looped(torch.nn.Module):
    def __init__(self, c, chunk, g):
        super().__init__()
        d, n_layers = c["d_model"], c["n_layers"]
        self.loops = c["n_loops"]
        self.emb = torch.nn.Parameter(torch.randn(c["vocab"], d, generator=g) * 0.02)
        self.norms = torch.nn.ParameterList([torch.nn.Parameter(torch.ones(d)) for _ in range(n_layers)])
        attn = set(c.get("attn_layers", []))
        self.mixers = torch.nn.ModuleList([
            Attention(d, c.get("heads", 4), c.get("kv_heads", c.get("heads", 4)), n_layers, g)
            if i in attn
            else Mamba2(d, c["d_state"], c["headdim"], n_layers, chunk, g)
            for i in range(n_layers)
        ])
        self.norm_f = torch.nn.Parameter(torch.ones(d))

    def param_groups(self, wd):
        no = [*self.norms, self.norm_f] + [p for m in self.mixers for p in m.no_decay()]
        ids = {id(p) for p in no}
        yes = [p for p in self.parameters() if id(p) not in ids]
        return [{"params": yes, "weight_decay": wd}, {"params": no, "weight_decay": 0.0}]

    def forward(self, tokens, targets):
        h = F.embedding(tokens, self.emb)
        for _ in range(self.loops):
            for norm, mixer in zip(self.norms, self.mixers):
                h = h + mixer(rmsnorm(h, norm))
        logits = rmsnorm(h, self.norm_f) @ self.emb.t()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def bench(c, chunk, threads, warmup, reps, device="cpu", autocast=None):
    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    # made on the CPU from the seeded generator, then moved: the same weights on every device
    model = Looped(c, chunk, g).to(device)
    b, t = c["batch"], c["seq"]
    tokens = torch.randint(0, c["vocab"], (b, t), generator=g).to(device)
    targets = torch.randint(0, c["vocab"], (b, t), generator=g).to(device)
    if device != "cpu":
        torch.set_default_device(device)  # the masks and RoPE tables the forward makes
    opt = torch.optim.AdamW(model.param_groups(0.01), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        if autocast == "bf16":
            with torch.autocast(device_type=device, dtype=torch.bfloat16):
                loss = model(tokens, targets)
        else:
            loss = model(tokens, targets)
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device

    for _ in range(warmup):
        step()
    wall, cpu = wall_and_cpu(step, reps)
    sec = wall[len(wall) // 2]
    return {
        "name": c["name"],
        "threads": threads,
        "seconds": sec,
        "cpu_seconds": cpu[len(cpu) // 2],
        "tokens_per_s": b * t / sec,
        "samples": wall,
        "cpu_samples": cpu,
    }


def main():
    args = json.loads(sys.argv[1])
    chunk = int(args.get("chunk", 64))
    warmup, reps = int(args.get("warmup", 1)), int(args.get("reps", 3))
    device, autocast = args.get("device", "cpu"), args.get("autocast")
    results = [
        bench(c, chunk, int(th), warmup, reps, device, autocast)
        for th in args.get("threads", [1, 2])
        for c in args["configs"]
    ]
    print(json.dumps({"torch": torch.__version__, "results": results}))


if __name__ == "__main__":
    main()
