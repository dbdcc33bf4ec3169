"""The model's generic pieces in plain float64 PyTorch, written from docs/model.md: RMSNorm (§2),
the mean cross-entropy with ignore index −100 (§1), the embedding lookup, and one AdamW update
(decoupled weight decay, bias-corrected moments, as torch.optim.AdamW; the generator checks this
against torch.optim.AdamW itself)."""
import torch

IGNORE = -100


def rmsnorm(x, weight, eps):
    """x·r·weight, r = 1/sqrt(mean(x²) + eps) over the last axis."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def cross_entropy(logits, targets):
    """Mean over positions whose target is not −100 of −log softmax(logits)[target]; [1]."""
    flat = logits.reshape(-1, logits.shape[-1])
    t = targets.reshape(-1)
    keep = t != IGNORE
    logp = torch.log_softmax(flat[keep], -1)
    picked = logp.gather(1, t[keep][:, None])[:, 0]
    return -picked.mean().reshape(1)


def per_token_cross_entropy(logits, targets):
    """−log softmax(logits)[target] per position ([...]), 0 where the target is −100."""
    t = targets.clamp(min=0)
    logp = torch.log_softmax(logits, -1)
    ce = -logp.gather(-1, t[..., None])[..., 0]
    return torch.where(targets == IGNORE, torch.zeros_like(ce), ce)


def embedding(ids, weight):
    """weight[ids]: ids [...] → [..., D]."""
    return weight[ids]


def adamw_step(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay, decay):
    """One AdamW update at step t (1-based) → new p, m, v:
    p ← p·(1 − lr·wd) (decay only);  m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
    p ← p − lr·(m/(1−β1^t)) / (sqrt(v/(1−β2^t)) + eps)."""
    if decay:
        p = p * (1 - lr * weight_decay)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    mhat = m / (1 - beta1**t)
    vhat = v / (1 - beta2**t)
    return p - lr * mhat / (torch.sqrt(vhat) + eps), m, v
