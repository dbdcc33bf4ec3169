/**
 * Everything the gate contributes to `looplm forward` / the golden outputs (docs/formats.md "Golden
 * vectors"), from one batch of a looped model's per-step outputs:
 *   gate.lambda [R, ...S], exit.pdf [R, ...S], loss.stage1 [1], loss.stage2 [1],
 *   exit.step.q{q} [...S] (1-based, float32) for each q.
 * The returned loss tensors keep their graphs: backward(stage1) gives grad.stage1.* for every
 * parameter, backward(stage2) gives grad.stage2.exit_gate.* (nothing else is reachable).
 */
import { type IntTensor, noGrad, sigmoid, type Tensor } from "@loop/tensor";
import { exitPdf } from "./exit-pdf.js";
import { exitStepName } from "./format-q.js";
import { DEFAULT_BETA, stage1Loss } from "./stage1.js";
import { DEFAULT_GAMMA, DEFAULT_K, type GateLike, stage2Loss } from "./stage2.js";
import { thresholdExit } from "./threshold-exit.js";

export interface GateOutputOptions {
  beta?: number;
  k?: number;
  gamma?: number;
  /** Thresholds for exit.step.q{q} (default none). */
  qs?: readonly number[];
}

export interface NamedOutput {
  data: Float32Array;
  shape: number[];
}

export interface GateOutputs {
  /** Gate logits a [R, ...S], recorded (graph into readouts and the gate). */
  gateLogits: Tensor;
  /** λ = sigmoid(a) [R, ...S], not recorded. */
  lambda: Tensor;
  /** Exit distribution p [R, ...S], not recorded. */
  pdf: Tensor;
  /** L1: graph into every step's logits, the readouts and the gate. */
  stage1: Tensor;
  /** L2: graph into the gate parameters only. */
  stage2: Tensor;
  /** Threshold exit steps per q, in the order of `qs`. */
  exitSteps: { q: number; steps: IntTensor }[];
  /** The tensors above under their docs/formats.md names. */
  tensors: Map<string, NamedOutput>;
}

export function gateOutputs(
  readouts: readonly Tensor[],
  logitsPerStep: readonly Tensor[],
  targets: IntTensor,
  gate: GateLike,
  opts: GateOutputOptions = {},
): GateOutputs {
  const gateLogits = gate.logits(readouts);
  const { lambda, pdf } = noGrad(() => ({ lambda: sigmoid(gateLogits), pdf: exitPdf(gateLogits) }));
  const stage1 = stage1Loss(gateLogits, logitsPerStep, targets, {
    beta: opts.beta ?? DEFAULT_BETA,
  });
  const stage2 = stage2Loss(gate, readouts, logitsPerStep, targets, {
    k: opts.k ?? DEFAULT_K,
    gamma: opts.gamma ?? DEFAULT_GAMMA,
  });
  const exitSteps = (opts.qs ?? []).map((q) => ({ q, steps: thresholdExit(pdf, q) }));
  const tensors = new Map<string, NamedOutput>([
    ["gate.lambda", { data: lambda.data, shape: [...lambda.shape] }],
    ["exit.pdf", { data: pdf.data, shape: [...pdf.shape] }],
    ["loss.stage1", { data: stage1.data, shape: [1] }],
    ["loss.stage2", { data: stage2.data, shape: [1] }],
  ]);
  for (const { q, steps } of exitSteps) {
    tensors.set(exitStepName(q), { data: Float32Array.from(steps.data), shape: [...steps.shape] });
  }
  return { gateLogits, lambda, pdf, stage1, stage2, exitSteps, tensors };
}
