"""The exit gate of docs/exit-gate.md in plain float64 PyTorch, in log space as the page says:
λ(r), the exit distribution p(r), the stage-1 and stage-2 losses and the threshold exit step."""
import torch
import torch.nn.functional as F

from basic_ops import IGNORE, per_token_cross_entropy


def gate_logits(readouts, weight, bias):
    """a(r) = weight·readout(r) + bias → [R,B,T]."""
    return torch.stack([(r @ weight.T)[..., 0] + bias[0] for r in readouts])


def log_exit_pdf(a):
    """ln p(r) from gate logits a [R,B,T]: ln λ = logsigmoid(a), ln(1−λ) = logsigmoid(−a);
    p(r) = λ(r)·S(r−1) for r < R, p(R) = S(R−1)."""
    R = a.shape[0]
    log_lam, log_keep = F.logsigmoid(a), F.logsigmoid(-a)
    out = []
    survive = torch.zeros_like(a[0])
    for r in range(R):
        out.append(survive + (log_lam[r] if r < R - 1 else 0))
        survive = survive + log_keep[r]
    return torch.stack(out)


def masked_mean(x, targets):
    keep = (targets != IGNORE).to(x.dtype)
    return (x * keep).sum() / keep.sum()


def stage1_loss(logits, targets, a, beta):
    """mean_t [Σ_r p(r)·ℓ(r) − β·H(p)], H = −Σ_r p ln p."""
    logp = log_exit_pdf(a)
    p = logp.exp()
    ce = torch.stack([per_token_cross_entropy(l, targets) for l in logits])
    per = (p * ce).sum(0) + beta * (p * logp).sum(0)
    return masked_mean(per, targets).reshape(1)


def stage2_loss(ce, a, targets, k, gamma):
    """(1/R)·Σ_{r=2..R} −mean_t [w·ln(1−λ(r)) + (1−w)·ln λ(r)], w = σ(k·(max(0, ℓ(r−1) − ℓ(r)) − γ));
    ce [R,B,T] the per-step losses (constants)."""
    R = a.shape[0]
    total = torch.zeros((), dtype=a.dtype)
    for r in range(1, R):
        w = torch.sigmoid(k * ((ce[r - 1] - ce[r]).clamp(min=0) - gamma))
        term = w * F.logsigmoid(-a[r]) + (1 - w) * F.logsigmoid(a[r])
        total = total - masked_mean(term, targets)
    return (total / R).reshape(1)


def exit_steps(pdf, q):
    """1-based first step n with Σ_{r≤n} p(r) ≥ q (R when none), [B,T]."""
    R = pdf.shape[0]
    cdf = pdf.cumsum(0)
    reached = cdf >= q
    first = torch.where(reached.any(0), reached.to(torch.int64).argmax(0) + 1, torch.full_like(cdf[0], R, dtype=torch.int64))
    return first.to(torch.float64)


def q_name(q):
    """q with at most 4 decimals and no trailing zeros (docs/formats.md): 0.5, 0.25, 1."""
    return f"{q:.4f}".rstrip("0").rstrip(".")
