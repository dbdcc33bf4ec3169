/**
 * Test-only stand-ins (not exported): a model whose per-step logits are given by a function of
 * the tokens, with readout = logits (D = V) and an identity LM head, so tests control exactly
 * what each loop step predicts and — through readout column 0 and a gate weight e₀ — the gate.
 */
import { ExitGate } from "@loop/exit-gate";
import { LoopedModel, makeConfig } from "@loop/looped";
import { type IntTensor, Rng, type Tensor, tensor } from "@loop/tensor";
import type { EvalForwardResult, EvalModel } from "./eval-model.js";

export type StepLogitsFn = (r: number, tokens: Int32Array, B: number, T: number) => Float32Array;

export function tableModel(R: number, V: number, fn: StepLogitsFn, gated = false): EvalModel {
  const exitGate = gated ? new ExitGate({ dModel: V }, { rng: new Rng(0) }) : null;
  if (exitGate)
    exitGate.weight.data.set(Float32Array.from({ length: V }, (_v, i) => (i === 0 ? 1 : 0)));
  return {
    config: { n_loops: R, vocab_size: V },
    exitGate,
    forward(tokens: IntTensor, opts: { skipLogits?: boolean }): EvalForwardResult {
      const [B, T] = tokens.shape as [number, number];
      const readouts: Tensor[] = [];
      for (let r = 1; r <= R; r++) readouts.push(tensor(fn(r, tokens.data, B, T), [B, T, V]));
      return {
        readouts,
        logits: opts.skipLogits ? [] : readouts,
        stepIndex: readouts.map((_x, i) => i + 1),
      };
    },
    head: (x: Tensor) => x,
  };
}

/** A tiny real looped Mamba-2 model (d_model 16, vocab 32). */
export function tinyLoopedModel(
  opts: { loops?: number; gate?: boolean; seed?: number } = {},
): LoopedModel {
  const cfg = makeConfig({
    backbone: "mamba",
    vocab_size: 32,
    d_model: 16,
    n_layers: 1,
    n_loops: opts.loops ?? 3,
    exit_gate: opts.gate ?? false,
    ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
  });
  const m = new LoopedModel(cfg, { seed: opts.seed ?? 1 });
  if (m.exitGate) {
    // A gate with enough spread that thresholds pick different steps for different tokens.
    const w = m.exitGate.weight.data;
    for (let i = 0; i < w.length; i++) w[i] = (i % 3) - 1;
  }
  return m;
}
