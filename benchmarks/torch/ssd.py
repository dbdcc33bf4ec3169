"""PyTorch transcription of the chunked SSD algorithm (Mamba-2 `ssd_minimal`, G = 1), timed
forward + backward (autograd) for the shapes given on the command line.

Usage: ssd.py '{"shapes": [{"B":..,"T":..,"H":..,"P":..,"N":..}], "chunk": 64, "reps": 5,
                "threads": 1}'
Prints one JSON line: {"seconds": [...], "cpu_seconds": [...], "threads": n, "torch": version}
(median over reps after one warm-up; T must be a multiple of the chunk).
"""
import json
import sys

import torch
from timing import wall_and_cpu


def segsum(x):
    """exp-able segment sums: out[..., i, j] = sum_{j<k<=i} x[..., k] (j <= i), -inf above."""
    t = x.size(-1)
    x = x[..., None].expand(*x.shape, t)
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool), diagonal=-1)
    x = x.masked_fill(~mask, 0)
    s = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool), diagonal=0)
    return s.masked_fill(~mask, -torch.inf)


def ssd_chunked(x, dt, a, b, c, chunk):
    """x [B,T,H,P], dt [B,T,H], a [H], b/c [B,T,N] (one group) -> y [B,T,H,P], final state."""
    bs, t, h, p = x.shape
    n = b.shape[-1]
    nc = t // chunk
    xd = (x * dt[..., None]).reshape(bs, nc, chunk, h, p)
    ad = (dt * a).reshape(bs, nc, chunk, h).permute(0, 3, 1, 2)  # b h c l
    bb = b.reshape(bs, nc, chunk, n)
    cc = c.reshape(bs, nc, chunk, n)
    a_cumsum = torch.cumsum(ad, dim=-1)
    lmat = torch.exp(segsum(ad))  # b h c l s
    y_diag = torch.einsum("bcln,bcsn,bhcls,bcshp->bclhp", cc, bb, lmat, xd)
    decay_states = torch.exp(a_cumsum[..., -1:] - a_cumsum)
    states = torch.einsum("bcln,bhcl,bclhp->bchpn", bb, decay_states, xd)
    states = torch.cat([torch.zeros_like(states[:, :1]), states], dim=1)
    decay_chunk = torch.exp(segsum(torch.nn.functional.pad(a_cumsum[..., -1], (1, 0))))
    new_states = torch.einsum("bhzc,bchpn->bzhpn", decay_chunk, states)
    states, final = new_states[:, :-1], new_states[:, -1]
    y_off = torch.einsum("bcln,bchpn,bhcl->bclhp", cc, states, torch.exp(a_cumsum))
    return (y_diag + y_off).reshape(bs, t, h, p), final


def run(shape, chunk, reps):
    g = torch.Generator().manual_seed(0)
    bs, t, h, p, n = (shape[k] for k in "BTHPN")
    x = torch.randn(bs, t, h, p, generator=g).requires_grad_()
    dt = (torch.rand(bs, t, h, generator=g) * 0.099 + 0.001).requires_grad_()
    a = (-1 - 7 * torch.rand(h, generator=g)).requires_grad_()
    b = torch.randn(bs, t, n, generator=g).requires_grad_()
    c = torch.randn(bs, t, n, generator=g).requires_grad_()
    dy = torch.rand(bs, t, h, p, generator=g) * 2 - 1
    inputs = [x, dt, a, b, c]

    def once():
        for v in inputs:
            v.grad = None
        y, _ = ssd_chunked(x, dt, a, b, c, chunk)
        (y * dy).sum().backward()

    once()
    wall, cpu = wall_and_cpu(once, reps)
    return wall[len(wall) // 2], cpu[len(cpu) // 2]


def main():
    args = json.loads(sys.argv[1])
    threads = int(args.get("threads", 1))
    torch.set_num_threads(threads)
    res = [run(s, int(args["chunk"]), int(args["reps"])) for s in args["shapes"]]
    print(json.dumps({
        "seconds": [r[0] for r in res],
        "cpu_seconds": [r[1] for r in res],
        "threads": threads,
        "torch": torch.__version__,
    }))


if __name__ == "__main__":
    main()
