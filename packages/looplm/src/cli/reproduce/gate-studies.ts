/*
 * The exit-gate studies (pretrain → gate1 → gate2): `exit-gate` on p-hop with a fixed p, and
 * `gate-mixed` on p-hop whose p is drawn per sequence.
 */
import type { GateStudyDef } from "./gate-study-types.js";
import { lmModel, lmTask, lmTrain } from "./lm-study.js";
import { PHOP_MAMBA } from "./phop-studies.js";
import type { Scale } from "./study-types.js";

/** The exit-gate study (p-hop with p = 4 at cpu scale, Mano L = 10 at the paper's). */
export function exitGate(scale: Scale): GateStudyDef {
  const cpu = scale === "cpu";
  return {
    name: "exit-gate",
    title: "Exit gate (pretrain → gate1 → gate2): depth/accuracy frontier",
    notes: cpu
      ? "p-hop as in the phop study (|Σ| = 4, n = 32, p = 4, one Mamba-2 layer of d_model 128 with loop_norm, 2,000 pretraining steps of 64: the budget at which its 1⊗4 learns the task), 1⊗4 with an exit gate; the gate's mean exit step and accuracy at each q against fixed exit at every step."
      : "Mano L = 10, 4⊗4 (docs/experiments.md).",
    task: cpu
      ? { task: "phop", alphabet: 4, length: 32, hops: 4, dense: true }
      : { task: "mano", maxOps: 10 },
    model: cpu ? PHOP_MAMBA : { dModel: 128, dState: 32, headdim: 32, chunk: 64 },
    layers: cpu ? 1 : 4,
    loops: 4,
    pretrain: cpu
      ? { steps: 2000, batch: 64, lr: 3e-3, warmup: 100, evalEvery: 250 }
      : { steps: 20000, batch: 64, lr: 1e-3, evalEvery: 1000 },
    gate1: cpu
      ? { steps: 200, batch: 64, lr: 1e-3, warmup: 10, beta: 0.05, evalEvery: 100 }
      : { steps: 2000, batch: 64, lr: 3e-4, beta: 0.05, evalEvery: 500 },
    gate2: cpu
      ? { steps: 200, batch: 64, lr: 1e-3, warmup: 10, k: 50, gamma: 0.005, evalEvery: 100 }
      : { steps: 1000, batch: 64, lr: 1e-3, k: 50, gamma: 0.005, evalEvery: 500 },
    evalCount: cpu ? 512 : 1000,
    qs: [0.1, 0.3, 0.5, 0.7, 0.9],
    paper: "140M: gate 38.87 at mean step 3.00 vs fixed loop 4 37.79",
  };
}

/**
 * The gate on data whose needed depth varies per sequence: p-hop with p drawn per sequence from
 * 1..4 (the exit-gate study's model and stages otherwise), evaluated as a whole and per p.
 */
export function gateMixed(scale: Scale): GateStudyDef {
  const base = exitGate(scale);
  const cpu = scale === "cpu";
  return {
    ...base,
    name: "gate-mixed",
    title: "Exit gate on mixed difficulty (p-hop, p drawn per sequence from 1..R)",
    notes: cpu
      ? "p-hop with |Σ| = 4, n = 32 and each sequence's p drawn uniformly from 1..4 (dense targets for each prefix's answer under its row's p), the exit-gate study's 1⊗4 (one Mamba-2 layer, d_model 128, loop_norm) trained through its three stages (2,000 pretraining steps, 200 + 200 gate steps); evaluation on 1,024 held-out sequences, as a whole and for each p apart: fixed exit at every step, the gate at each q and its mean exit step per p, and the gate against fixed exit at equal depth, at ⌈d⌉ and at R (Holm-adjusted over the q values)."
      : "p-hop with n = 256 and p drawn per sequence from 1..12, 1⊗12.",
    task: cpu
      ? { task: "phop", alphabet: 4, length: 32, hops: 4, dense: true, mixedHops: true }
      : { task: "phop", alphabet: 4, length: 256, hops: 12, mixedHops: true },
    model: cpu ? PHOP_MAMBA : { dModel: 64, dState: 16, headdim: 16, chunk: 64 },
    layers: 1,
    loops: cpu ? 4 : 12,
    evalCount: cpu ? 1024 : 2000,
    byHops: true,
  };
}

/**
 * The gate on language modelling: the `lm` study's SOTU `2⊗4` (the same model, corpus, flags and
 * seeds, so its pretraining stage is that study's member) given a gate through gate1 and gate2.
 */
export function lmGate(scale: Scale): GateStudyDef {
  const cpu = scale === "cpu";
  const { evalEvery: _e, evalCount: _c, ...train } = lmTrain(cpu);
  return {
    name: "lm-gate",
    title: "Exit gate on language modelling (SOTU, the lm study's 2⊗4 with a gate)",
    notes: cpu
      ? "The `lm` study's SOTU 2⊗4 (two Mamba-2 layers of d_model 64, BPE vocabulary 1,024, windows of 128 tokens, 1,500 steps of 16 windows), then gate1 and gate2 (200 steps of 16 windows each); validation perplexity on 128 held-out windows at every fixed exit and gate q."
      : "The `lm` study's SOTU 2⊗4 at the paper's sizes with its gate.",
    task: lmTask(cpu) as GateStudyDef["task"],
    model: lmModel(cpu),
    layers: 2,
    loops: 4,
    pretrain: lmTrain(cpu),
    gate1: { ...train, steps: cpu ? 200 : 1000, lr: 1e-3, warmup: 10, beta: 0.05, evalEvery: 100 },
    gate2: {
      ...train,
      steps: cpu ? 200 : 1000,
      lr: 1e-3,
      warmup: 10,
      k: 50,
      gamma: 0.005,
      evalEvery: 100,
    },
    evalCount: cpu ? 128 : 64,
    qs: [0.1, 0.3, 0.5, 0.7, 0.9],
    paper: "140M: gate 38.87 at mean step 3.00 vs fixed loop 4 37.79",
  };
}
