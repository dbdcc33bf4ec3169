"""PyTorch reference timings for benchmarks/exit-gate.bench.ts (same shapes, float32, 1 thread).

Reads one JSON line {R,B,T,D,V,reps} on argv[1]; prints JSON {name: median_ms}.
Each case is forward + backward of the same maths as the looplm fused op, written the usual
eager-PyTorch way.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)
cfg = json.loads(sys.argv[1])
R, B, T, D, V, reps = (cfg[k] for k in ("R", "B", "T", "D", "V", "reps"))
g = torch.Generator().manual_seed(0)


def rnd(*shape, req=True):
    return torch.randn(*shape, generator=g).requires_grad_(req)


readouts = [rnd(B, T, D) for _ in range(R)]
w = rnd(1, D)
b = rnd(1)
a0 = rnd(R, B, T)
logits = [rnd(B, T, V) for _ in range(R)]
targets = torch.randint(0, V, (B, T), generator=g)
targets[:, ::3] = -100
mask = (targets != -100).float()
n = mask.sum()
ce0 = torch.rand(R, B, T, generator=g).add(2).requires_grad_(True)


def pdf_of(a):
    lam = torch.sigmoid(a)
    surv = torch.cumprod(1 - lam, dim=0)
    prev = torch.cat([torch.ones_like(surv[:1]), surv[:-1]], dim=0)
    p = lam * prev
    return torch.cat([p[:-1], prev[-1:]], dim=0)


def stage1(a, ce, beta=0.05):
    p = pdf_of(a)
    h = -(p * torch.log(p.clamp_min(1e-30))).sum(0)
    return (((p * ce).sum(0) - beta * h) * mask).sum() / n


def stage2(a, ce, k=50.0, gamma=0.005):
    ce = ce.detach()
    imp = (ce[:-1] - ce[1:]).clamp_min(0)
    wl = torch.sigmoid(k * (imp - gamma))
    aa = a[1:]
    bce = -(wl * F.logsigmoid(-aa) + (1 - wl) * F.logsigmoid(aa))
    return (bce * mask).sum() / (n * R)


def gate_logits():
    return torch.stack([(x @ w.t()).squeeze(-1) + b for x in readouts])


def per_step_ce():
    return torch.stack(
        [F.cross_entropy(l.reshape(-1, V), targets.reshape(-1), reduction="none").reshape(B, T) for l in logits]
    )


cases = {
    "gateLogits": lambda: gate_logits().sum(),
    "exitPdf": lambda: (pdf_of(a0) * ce0.detach()).sum(),
    "stage1Objective": lambda: stage1(a0, ce0),
    "stage2Objective": lambda: stage2(a0, ce0),
    "mixtureLogits": lambda: (torch.einsum("rbt,rbtv->btv", pdf_of(a0).detach().requires_grad_(), torch.stack(logits))).sum(),
    "stage1 end-to-end": lambda: stage1(gate_logits(), per_step_ce()),
}

out = {}
for name, fn in cases.items():
    ts = []
    for i in range(reps + 2):
        t0 = time.perf_counter()
        fn().backward()
        dt = time.perf_counter() - t0
        if i >= 2:
            ts.append(dt * 1000)
    out[name] = statistics.median(ts)
print(json.dumps(out))
