/**
 * Training on the device: one optimizer step = for each micro-batch, forward, the stage's loss
 * (docs/exit-gate.md "Training: three stages": pretrain = CE of step R; gate1 = L1; gate2 = L2)
 * and backward (gradients weighted by 1/micro-batches, summed into the parameters' persistent
 * gradients); then the global gradient norm and clipping on the device, one read-back of the
 * losses and the norm together, and — when both are finite — the AdamW update. Every tensor of
 * the step stays on the device; its transients go back to the pool at the end of the step.
 * The numerics are @loop/train's `Trainer` (same loss, same clipping, same AdamW).
 */
import type { DeviceModel } from "@loop/looped";
import type { AdamWState } from "@loop/tensor";
import { backwardGpu, zeroGpuGrads } from "../backward.js";
import type { GpuContext } from "../gpu-context.js";
import { type GpuTensor, releaseTransients, uploadTensor } from "../gpu-tensor.js";
import { crossEntropy } from "../ops/cross-entropy.js";
import { fillTensor } from "../ops/elementwise.js";
import { stage1Loss, stage2Loss } from "../ops/stage-losses.js";
import { GpuAdamW, type GpuNamedParameter } from "../optim/adamw.js";
import { clipGradNorm, gradNorm } from "../optim/clip.js";

export type GpuStage = "pretrain" | "gate1" | "gate2";

export interface GpuTrainerOptions {
  /** Training stage (default "pretrain"). */
  stage?: GpuStage;
  /** Peak learning rate, used when `step` gets none (default 1e-3). */
  lr?: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay?: number;
  /** Global gradient-norm clip (0 = off; default 1). */
  clip?: number;
  /** Stage-1 entropy weight β, stage-2 sharpness k and threshold γ (docs/exit-gate.md). */
  beta?: number;
  k?: number;
  gamma?: number;
}

/** One micro-batch as the tasks make it (@loop/tasks Batch). */
export interface GpuBatch {
  tokens: Int32Array;
  targets: Int32Array;
  shape: readonly [number, number];
  seqIdx?: Int32Array | null;
}

export interface GpuStepResult {
  loss: number;
  gradNorm: number;
}

/** The parameters a stage trains: pretrain all but the gate, gate2 the gate only, gate1 all. */
export function stageParameters(
  params: readonly GpuNamedParameter[],
  stage: GpuStage,
): GpuNamedParameter[] {
  const isGate = (p: GpuNamedParameter) => p.name.startsWith("exit_gate.");
  if (stage === "pretrain") return params.filter((p) => !isGate(p));
  if (stage === "gate2") return params.filter(isGate);
  return [...params];
}

export class GpuTrainer {
  readonly ctx: GpuContext;
  readonly model: DeviceModel<GpuTensor, GpuTensor>;
  readonly stage: GpuStage;
  /** The parameters this stage trains (the others are frozen: requiresGrad false). */
  readonly params: GpuNamedParameter[];
  readonly optimizer: GpuAdamW;
  private readonly opts: Required<Omit<GpuTrainerOptions, "stage">>;
  /** Gradient norm of the last step (before clipping). */
  lastGradNorm = Number.NaN;

  constructor(
    ctx: GpuContext,
    model: DeviceModel<GpuTensor, GpuTensor>,
    opts: GpuTrainerOptions = {},
  ) {
    this.ctx = ctx;
    this.model = model;
    this.stage = opts.stage ?? "pretrain";
    if (this.stage !== "pretrain" && !model.hasExitGate)
      throw new Error(
        `webgpu train: stage ${this.stage} needs a model with an exit gate (config exit_gate: true)`,
      );
    this.opts = {
      lr: opts.lr ?? 1e-3,
      beta1: opts.beta1 ?? 0.9,
      beta2: opts.beta2 ?? 0.95,
      eps: opts.eps ?? 1e-8,
      weightDecay: opts.weightDecay ?? 0.1,
      clip: opts.clip ?? 1,
      beta: opts.beta ?? 0.05,
      k: opts.k ?? 50,
      gamma: opts.gamma ?? 0.005,
    };
    this.params = stageParameters(model.parameters(), this.stage);
    const trained = new Set(this.params.map((p) => p.tensor));
    for (const p of model.parameters()) p.tensor.requiresGrad = trained.has(p.tensor);
    this.optimizer = new GpuAdamW(this.params, {
      lr: this.opts.lr,
      beta1: this.opts.beta1,
      beta2: this.opts.beta2,
      eps: this.opts.eps,
      weightDecay: this.opts.weightDecay,
    });
  }

  /** The stage's loss of one micro-batch (a one-element tensor, recorded). */
  loss(tokens: GpuTensor, targets: GpuTensor, seqIdx: GpuTensor | null): GpuTensor {
    const m = this.model;
    if (this.stage === "pretrain") {
      const { logits } = m.forward(tokens, { steps: "last", seqIdx });
      return crossEntropy(logits[0]!, targets);
    }
    const fwd = m.forward(tokens, { steps: "all", seqIdx });
    if (this.stage === "gate1")
      return stage1Loss(m.gateLogits(fwd.readouts), fwd.logits, targets, {
        beta: this.opts.beta,
      });
    const gate = { logits: (r: readonly GpuTensor[]) => m.gateLogits(r) };
    return stage2Loss(gate, fwd.readouts, fwd.logits, targets, {
      k: this.opts.k,
      gamma: this.opts.gamma,
    });
  }

  /**
   * One optimizer step over `batch` (or the micro-batches of one step) at learning rate `lr`
   * (default the options' lr); resolves to the mean loss. A non-finite loss or gradient norm
   * leaves weights and moments unchanged (check `lastGradNorm`).
   */
  async step(batch: GpuBatch | readonly GpuBatch[], lr = this.opts.lr): Promise<number> {
    return (await this.stepDetailed(batch, lr)).loss;
  }

  async stepDetailed(
    batch: GpuBatch | readonly GpuBatch[],
    lr = this.opts.lr,
  ): Promise<GpuStepResult> {
    const batches = (Array.isArray(batch) ? batch : [batch]) as readonly GpuBatch[];
    if (batches.length === 0) throw new Error("webgpu train: a step needs at least one batch");
    const n = batches.length;
    const ctx = this.ctx;
    zeroGpuGrads(this.params.map((p) => p.tensor));
    // Slots 0..n−1: the micro-batch losses; slot n: the gradient norm. Read back once.
    const report = fillTensor(ctx, [n + 1], 0);
    const seed = fillTensor(ctx, [1], 1 / n);
    batches.forEach((b, i) => {
      const [B, T] = b.shape;
      if (b.tokens.length !== B * T || b.targets.length !== B * T)
        throw new Error(
          `webgpu train: batch ${i} must hold B·T = ${B * T} tokens and targets, got ${b.tokens.length}/${b.targets.length}`,
        );
      const tokens = uploadTensor(ctx, b.tokens, [B, T]);
      const targets = uploadTensor(ctx, b.targets, [B, T]);
      const seqIdx = b.seqIdx ? uploadTensor(ctx, b.seqIdx, [B * T]) : null;
      const loss = this.loss(tokens, targets, seqIdx);
      ctx.copy(loss.buffer, 0, report.buffer, i * 4, 4);
      backwardGpu(loss, seed);
      // This micro-batch's activations are no longer needed: return them to the pool.
      releaseTransients(ctx, [report, seed]);
    });
    const params = this.params;
    const norm = this.opts.clip > 0 ? clipGradNorm(params, this.opts.clip) : gradNorm(params);
    ctx.copy(norm.buffer, 0, report.buffer, n * 4, 4);
    const values = await report.read();
    let loss = 0;
    for (let i = 0; i < n; i++) loss += values[i]!;
    loss /= n;
    const g = values[n]!;
    this.lastGradNorm = g;
    if (Number.isFinite(loss) && Number.isFinite(g)) this.optimizer.step(lr);
    releaseTransients(ctx);
    return { loss, gradNorm: g };
  }

  /** Optimizer moments and step count, read back (for checkpoints). */
  getOptimizerState(): Promise<AdamWState> {
    return this.optimizer.getState();
  }

  /** Release the optimizer moments and the trained parameters' gradients on the device. */
  dispose(): void {
    this.optimizer.dispose();
    zeroGpuGrads(this.params.map((p) => p.tensor));
  }

  /** Restore the moments and step count (null: fresh, zero moments at step 0). */
  setOptimizerState(st: AdamWState | null): void {
    this.optimizer.setState(st ?? { step: 0, m: {}, v: {} });
  }
}
