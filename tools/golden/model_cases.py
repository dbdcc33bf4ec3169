"""The whole-model golden cases (testdata/golden/<case>/): from config.json, model.safetensors and
inputs.json, every tensor of outputs.safetensors (docs/formats.md "Golden vectors") recomputed
with looped_model.py and exit_gate.py in float64."""
import json
import os

import torch

from basic_ops import cross_entropy, per_token_cross_entropy
from exit_gate import exit_steps, gate_logits, log_exit_pdf, q_name, stage1_loss, stage2_loss
from looped_model import looped_forward
from st_io import read_safetensors

MODEL_CASES = [
    "mamba-1x1",
    "mamba-2x3",
    "mamba-2x2-gate",
    "mamba-1x4-loopnorm-gate",
    "hybrid-3x2",
    "transformer-2x2",
    "mamba-2x1-hf-settings",
]


def load_case(folder):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(folder, "inputs.json")) as f:
        inputs = json.load(f)
    weights = read_safetensors(os.path.join(folder, "model.safetensors"))
    return cfg, weights, inputs


def grads_of(loss, params, names):
    gs = torch.autograd.grad(loss, [params[n] for n in names], allow_unused=True, retain_graph=True)
    return {n: (torch.zeros_like(params[n]) if g is None else g) for n, g in zip(names, gs)}


def model_outputs(folder):
    """{name: float64 tensor} in the order of docs/formats.md."""
    cfg, weights, inputs = load_case(folder)
    names = list(weights)
    params = {n: w.clone().requires_grad_(True) for n, w in weights.items()}
    tokens = torch.tensor(inputs["tokens"], dtype=torch.long)
    targets = torch.tensor(inputs["targets"], dtype=torch.long)
    readouts, logits = looped_forward(cfg, params, tokens)
    out = {}
    for r, l in enumerate(logits):
        out[f"logits.step{r + 1}"] = l.detach()
    loss = cross_entropy(logits[-1], targets)
    out["loss.final"] = loss.detach()
    for n, g in grads_of(loss, params, names).items():
        out[f"grad.final.{n}"] = g
    if not cfg["exit_gate"]:
        return out
    gw, gb = params["exit_gate.weight"], params["exit_gate.bias"]
    a = gate_logits(readouts, gw, gb)
    out["gate.lambda"] = torch.sigmoid(a).detach()
    pdf = log_exit_pdf(a).exp()
    out["exit.pdf"] = pdf.detach()
    l1 = stage1_loss(logits, targets, a, inputs["beta"])
    out["loss.stage1"] = l1.detach()
    for n, g in grads_of(l1, params, names).items():
        out[f"grad.stage1.{n}"] = g
    # Stage 2: the readouts and per-step losses are constants; only the gate learns.
    a2 = gate_logits([r.detach() for r in readouts], gw, gb)
    ce = torch.stack([per_token_cross_entropy(l.detach(), targets) for l in logits])
    l2 = stage2_loss(ce, a2, targets, inputs["k"], inputs["gamma"])
    out["loss.stage2"] = l2.detach()
    g2 = grads_of(l2, params, ["exit_gate.weight", "exit_gate.bias"])
    out["grad.stage2.exit_gate.weight"] = g2["exit_gate.weight"]
    out["grad.stage2.exit_gate.bias"] = g2["exit_gate.bias"]
    for q in inputs["q"]:
        out[f"exit.step.q{q_name(q)}"] = exit_steps(pdf.detach(), q)
    return out
