/*
 * What the evaluators need from a model: per-loop-step logits (and readouts for the exit gate),
 * the LM head for scoring a few positions, and the exit gate. `LoopedModel` satisfies it;
 * tests may pass a hand-made stand-in. Everything runs under `noGrad` (no tape is recorded), and
 * on the CPU kernels an evaluator is given (`OnKernels`: a backend's), else on those the
 * kernel-set registry holds.
 */
import {
  checkExitRule,
  type ExitRule,
  exitPdf,
  exitRuleNeeds,
  formatExitRule,
  type GateLike,
} from "@loop/exit-gate";
import type { Batch } from "@loop/tasks";
import { type IntTensor, intTensor, noGrad, type Tensor } from "@loop/tensor";
import { type CpuKernels, withKernels, withTemporaries } from "@loop/tensor/kernel";
import { type ExitTally, newTallies } from "./exit-tally.js";
import { newRuleTallies, type RuleTally } from "./rule-exits.js";

/** Where an evaluation's CPU work runs. */
export interface OnKernels {
  /**
   * The CPU kernels of the backend evaluating (every batch runs inside them, whatever another
   * backend in the process runs on between two batches); absent: the registry's.
   */
  kernels?: CpuKernels;
  /**
   * Awaited after every batch: lets the caller's event loop run during a long evaluation (a
   * signal handler) and stop it by throwing. With it each batch of a model on this thread runs
   * in its own `noGrad` scope, since the caller's does not outlast the first await.
   */
  between?: () => Promise<void>;
}

/**
 * A forward's outputs as the evaluators read them: readouts and logits of each kept loop step, with
 * its 1-based index.
 */
export interface EvalForwardResult {
  readouts: Tensor[];
  logits: Tensor[];
  stepIndex: number[];
}

/**
 * What the evaluators need of a model (`LoopedModel` satisfies it): its R and vocabulary size, its
 * exit gate, an all-steps forward and the LM head.
 */
export interface EvalModel {
  readonly config: { readonly n_loops: number; readonly vocab_size: number };
  readonly exitGate: GateLike | null;
  forward(
    tokens: IntTensor,
    opts: { steps: "all"; skipLogits?: boolean; seqIdx?: Int32Array | null },
  ): EvalForwardResult;
  /** logits = readout · Wᵀ for readouts [..., D] → [..., V]. */
  head(readout: Tensor): Tensor;
}

/**
 * One batch's outputs at every loop step: logits, and the exit distribution when asked for and the
 * model has a gate.
 */
export interface StepOutputs {
  /** logits(r) [B,T,V] for r = 1..R. */
  logits: Tensor[];
  /** Exit distribution p [R,B,T] when the model has a gate (and `gate` was asked), else null. */
  pdf: Tensor | null;
  /** readout(r) [B,T,D] for r = 1..R when asked for (the state-change exit rule), else absent. */
  readouts?: Tensor[] | null;
}

/**
 * Where the evaluators get each batch's step outputs: an `EvalModel` on this thread (computed
 * synchronously) or a model elsewhere (a GPU) whose outputs arrive asynchronously.
 */
export interface StepOutputSource {
  readonly config: EvalModel["config"];
  /** Whether the model has an exit gate. */
  readonly hasGate: boolean;
  /** `stepOutputs` of one batch (the exit pdf only when `gate`, the readouts when `readouts`). */
  outputs(batch: Batch, gate: boolean, readouts?: boolean): StepOutputs | Promise<StepOutputs>;
}

/** What the evaluators accept: a model, or a source of its step outputs. */
export type Evaluated = EvalModel | StepOutputSource;

/** `model` as a source of step outputs (a source is returned as it is). */
export function outputSource(model: Evaluated): StepOutputSource {
  if ("outputs" in model) return model;
  return {
    config: model.config,
    hasGate: model.exitGate !== null,
    outputs: (batch, gate, readouts) =>
      stepOutputs(model, intTensor(batch.tokens, [...batch.shape]), gate, batch.seqIdx, readouts),
  };
}

/**
 * All loop steps' logits (and the exit pdf, and with `readouts` the readouts), without recording
 * a tape; `seqIdx`: packed documents (Batch.seqIdx).
 */
export function stepOutputs(
  model: EvalModel,
  tokens: IntTensor,
  gate = true,
  seqIdx: Int32Array | null = null,
  readouts = false,
): StepOutputs {
  return noGrad(() => {
    const fwd = model.forward(tokens, seqIdx ? { steps: "all", seqIdx } : { steps: "all" });
    const R = model.config.n_loops;
    if (fwd.logits.length !== R)
      throw new Error(
        `model.forward: expected logits for ${R} loop steps, got ${fwd.logits.length}`,
      );
    const g = gate ? model.exitGate : null;
    const pdf = g ? exitPdf(g.logits(fwd.readouts)) : null;
    return readouts
      ? { logits: fwd.logits, pdf, readouts: fwd.readouts }
      : { logits: fwd.logits, pdf };
  });
}

/** What an evaluator's fold starts from: the model's sizes and one exit tally per threshold. */
export interface FoldSetup {
  R: number;
  V: number;
  /** Sorted by q; empty without a gate or thresholds. */
  tallies: ExitTally[];
  /** One per exit rule asked for (`opts.exits`), in their order. */
  rules: RuleTally[];
}

/**
 * The evaluation `name` (accuracy.ts, perplexity.ts): the fold `makeFold` builds for the
 * model's sizes and thresholds `opts.qs`, fed every batch's step outputs (batches checked
 * first), then its result. Each batch's computing and folding runs on `opts.kernels`. A source
 * that answers synchronously (a model on this thread) is folded without awaiting, so the whole
 * evaluation runs inside the caller's `noGrad`/`withScratch` scope, as one synchronous call
 * would — unless `opts.between` is given, awaited after each batch. Bad options and batches
 * reject the promise.
 */
export async function evaluateWith<R>(
  name: string,
  model: Evaluated,
  batches: Iterable<Batch>,
  opts: OnKernels & { qs?: readonly number[]; exits?: readonly ExitRule[] },
  makeFold: (setup: FoldSetup) => {
    add(batch: Batch, i: number, out: StepOutputs): void;
    result(): R;
  },
): Promise<R> {
  const empty = () => new Error(`${name}: batches is empty (expected ≥ 1)`);
  if (Array.isArray(batches) && batches.length === 0) throw empty();
  const qs = opts.qs ?? [];
  checkThresholds(qs);
  const source = outputSource(model);
  const R = source.config.n_loops;
  const V = source.config.vocab_size;
  const exits = opts.exits ?? [];
  for (const rule of exits) {
    checkExitRule(rule, R, name);
    if (exitRuleNeeds(rule).gate && !source.hasGate)
      throw new Error(`${name}: ${formatExitRule(rule)} needs a model with an exit gate`);
  }
  const gate = source.hasGate && (qs.length > 0 || exits.some((e) => exitRuleNeeds(e).gate));
  const readouts = exits.some((e) => exitRuleNeeds(e).state);
  const fold = makeFold({
    R,
    V,
    tallies: source.hasGate && qs.length > 0 ? newTallies(qs, R) : [],
    rules: newRuleTallies(exits, R),
  });
  // A model on this thread computes and folds each batch in one pooled scope: its outputs go
  // back to the pool once folded, so an evaluation of any count holds one batch's at a time
  // (inside a training step's scope too, which would otherwise keep every batch's to its end).
  // Batches may be made one by one as they are read, so a large set is never held whole.
  const here = !("outputs" in model);
  let i = 0;
  for (const batch of batches) {
    checkBatch(batch, i, V);
    if (here) {
      withTemporaries(() =>
        withKernels(opts.kernels, () =>
          noGrad(() => fold.add(batch, i, source.outputs(batch, gate, readouts) as StepOutputs)),
        ),
      );
      i++;
      if (opts.between) await opts.between();
      continue;
    }
    const pending = withKernels(opts.kernels, () => source.outputs(batch, gate, readouts));
    const out = pending instanceof Promise ? await pending : pending;
    withKernels(opts.kernels, () => fold.add(batch, i, out));
    i++;
    if (opts.between) await opts.between();
  }
  if (i === 0) throw empty();
  return fold.result();
}

/** Check a list of exit thresholds: each in [0, 1]. */
function checkThresholds(qs: readonly number[], name = "qs"): void {
  qs.forEach((q, i) => {
    if (typeof q !== "number" || !(q >= 0 && q <= 1))
      throw new Error(`${name}[${i}] must be a threshold in [0, 1], got ${q}`);
  });
}

/** The default q sweep: 0, 0.1, …, 1. */
export const DEFAULT_Q_SWEEP: readonly number[] = Object.freeze(
  Array.from({ length: 11 }, (_v, i) => i / 10),
);

/** Check a batch's sizes and that its tokens are ids of the model's vocabulary. */
export function checkBatch(batch: Batch, i: number, vocab: number): void {
  const [B, T] = batch.shape;
  if (batch.tokens.length !== B * T || batch.targets.length !== B * T)
    throw new Error(
      `batches[${i}]: tokens/targets must hold B·T = ${B * T} ids, got ${batch.tokens.length}/${batch.targets.length}`,
    );
  for (let k = 0; k < batch.tokens.length; k++) {
    const t = batch.tokens[k]!;
    if (t < 0 || t >= vocab)
      throw new Error(
        `batches[${i}].tokens[${k}] = ${t} is outside the model's vocab [0, ${vocab})`,
      );
  }
}
