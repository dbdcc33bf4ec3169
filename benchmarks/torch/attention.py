"""PyTorch eager transcription of causal GQA attention, for benchmarks/attention.ts.

Explicit softmax(Q·Kᵀ/sqrt(hd) + causal mask)·V with the KV heads repeated to the query heads
(docs/model.md §4), timed forward + backward. Usage:
  attention.py time B,T,Hq,Hkv,hd [B,T,Hq,Hkv,hd ...] [--reps N] [--threads N]
  attention.py memory B,T,Hq,Hkv,hd      (peak RSS growth of one forward + backward, bytes)
Prints one JSON object per line.
"""
import json
import math
import statistics
import sys

import torch
from timing import wall_and_cpu


def attention(q, k, v):
    # q [B,T,Hq,hd], k/v [B,T,Hkv,hd] -> [B,T,Hq,hd]
    B, T, Hq, hd = q.shape
    g = Hq // k.shape[2]
    qh = q.transpose(1, 2)
    kh = k.transpose(1, 2).repeat_interleave(g, dim=1)
    vh = v.transpose(1, 2).repeat_interleave(g, dim=1)
    s = qh @ kh.transpose(-1, -2) / math.sqrt(hd)
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)
    p = torch.softmax(s.masked_fill(mask, float("-inf")), dim=-1)
    return (p @ vh).transpose(1, 2)


def inputs(B, T, Hq, Hkv, hd):
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(B, T, Hq, hd, generator=gen, requires_grad=True)
    k = torch.randn(B, T, Hkv, hd, generator=gen, requires_grad=True)
    v = torch.randn(B, T, Hkv, hd, generator=gen, requires_grad=True)
    dy = torch.randn(B, T, Hq, hd, generator=gen)
    return q, k, v, dy


def step(q, k, v, dy):
    for t in (q, k, v):
        t.grad = None
    attention(q, k, v).backward(dy)


def time_case(shape, reps):
    q, k, v, dy = inputs(*shape)
    step(q, k, v, dy)  # warm-up
    walls, cpus = wall_and_cpu(lambda: step(q, k, v, dy), reps)
    return {
        "shape": list(shape),
        "wall_ms": statistics.median(walls) * 1e3,
        "cpu_ms": statistics.median(cpus) * 1e3,
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
    }


def memory_case(shape):
    q, k, v, dy = inputs(*shape)
    small = inputs(shape[0], 16, *shape[2:])
    step(*small)  # warm-up allocations of the autograd machinery
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the peak RSS (VmHWM) to the current RSS
    base = status_bytes("VmRSS")
    step(q, k, v, dy)
    return {"shape": list(shape), "peak_growth_bytes": max(0, status_bytes("VmHWM") - base)}


def status_bytes(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def main(argv):
    mode, rest = argv[0], argv[1:]
    reps, threads = 5, 1
    if "--reps" in rest:
        i = rest.index("--reps")
        reps = int(rest[i + 1])
        rest = rest[:i] + rest[i + 2 :]
    if "--threads" in rest:
        i = rest.index("--threads")
        threads = int(rest[i + 1])
        rest = rest[:i] + rest[i + 2 :]
    torch.set_num_threads(threads)
    for spec in rest:
        shape = tuple(int(x) for x in spec.split(","))
        out = time_case(shape, reps) if mode == "time" else memory_case(shape)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
