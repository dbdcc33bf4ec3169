/**
 * The looped model N⊗R (docs/model.md §1) on the device: the CPU model's loop over R (`runLoop`
 * of @loop/looped) over layers transcribed with the GPU ops of the same names. h(0) = embed(tokens); h(r) = the N layers
 * applied to h(r−1) (then norm_f when loop_norm); readout(r) = norm_f(h(r)) (h(r) itself with
 * loop_norm); logits(r) = readout(r)·Wᵀ, W the LM head or, tied, the embedding. Every parameter
 * is one persistent leaf used by all R steps, so the tape sums its R gradient contributions.
 */
import { keepSteps, type LoopedModel, type ModelConfig, runLoop } from "@loop/looped";
import type { GpuContext } from "../gpu-context.js";
import type { GpuTensor } from "../gpu-tensor.js";
import type { GpuNamedParameter } from "../gpu-train-ops.js";
import { embedding } from "../ops/embedding.js";
import { gateLogits } from "../ops/gate-logits.js";
import { linear } from "../ops/matmul.js";
import { rmsnorm } from "../ops/rmsnorm.js";
import { GpuLayer } from "./gpu-layer.js";
import { GpuParameters } from "./gpu-parameters.js";

export interface GpuForwardOptions {
  /** "all": readout and logits of every loop step; "last": of step R only (pre-training). */
  steps?: "all" | "last";
  /** Skip the LM head (readouts only). */
  skipLogits?: boolean;
  /** Packed documents: i32 [B·T] document index per position (LoopedModel's seqIdx). */
  seqIdx?: GpuTensor | null;
}

export interface GpuForwardResult {
  /** readout(r) [B,T,D] for each returned step. */
  readouts: GpuTensor[];
  /** logits(r) [B,T,V] for each returned step (empty with skipLogits). */
  logits: GpuTensor[];
  /** The 1-based loop step of each returned entry. */
  stepIndex: number[];
}

export class GpuLoopedModel {
  readonly ctx: GpuContext;
  readonly config: ModelConfig;
  private readonly params: GpuParameters;
  readonly layers: GpuLayer[];
  private readonly embeddings: GpuTensor;
  private readonly normF: GpuTensor;
  private readonly headWeight: GpuTensor;
  private readonly gate: { weight: GpuTensor; bias: GpuTensor } | null;

  private constructor(ctx: GpuContext, config: ModelConfig, params: GpuParameters) {
    this.ctx = ctx;
    this.config = config;
    this.params = params;
    this.embeddings = params.get("backbone.embeddings.weight");
    this.normF = params.get("backbone.norm_f.weight");
    this.headWeight = config.tie_embeddings ? this.embeddings : params.get("lm_head.weight");
    this.layers = [];
    for (let i = 0; i < config.n_layers; i++) this.layers.push(new GpuLayer(config, i, params));
    this.gate = config.exit_gate
      ? { weight: params.get("exit_gate.weight"), bias: params.get("exit_gate.bias") }
      : null;
  }

  /** Upload every parameter of `model` (persistent, by its docs/model.md §6 name). */
  static fromModel(ctx: GpuContext, model: LoopedModel): GpuLoopedModel {
    return new GpuLoopedModel(ctx, model.config, GpuParameters.upload(ctx, model));
  }

  /** Every parameter with its §6 name and weight-decay flag, in the CPU model's order. */
  parameters(): GpuNamedParameter[] {
    return [...this.params.list];
  }

  /** Whether the model has an exit gate (config exit_gate). */
  get hasExitGate(): boolean {
    return this.gate !== null;
  }

  /** The state handed to the next loop step: norm_f(h) when loop_norm, else h. */
  endOfStep(h: GpuTensor): GpuTensor {
    return this.config.loop_norm ? rmsnorm(h, this.normF, this.config.norm_eps) : h;
  }

  /** readout(r) from h(r). */
  readout(h: GpuTensor): GpuTensor {
    return this.config.loop_norm ? h : rmsnorm(h, this.normF, this.config.norm_eps);
  }

  /** logits = readout · Wᵀ. */
  head(readout: GpuTensor): GpuTensor {
    return linear(readout, this.headWeight);
  }

  embed(tokens: GpuTensor): GpuTensor {
    if (tokens.rank !== 2 || tokens.dtype !== "i32")
      throw new Error(
        `webgpu forward: tokens must be an i32 tensor [B, T], got ${tokens.dtype} [${tokens.shape.join(",")}]`,
      );
    if (tokens.size === 0)
      throw new Error(`webgpu forward: tokens must be non-empty, got [${tokens.shape.join(",")}]`);
    return embedding(tokens, this.embeddings);
  }

  forward(tokens: GpuTensor, opts: GpuForwardOptions = {}): GpuForwardResult {
    const seqIdx = opts.seqIdx ?? null;
    if (seqIdx && (seqIdx.dtype !== "i32" || seqIdx.size !== tokens.size))
      throw new Error(
        `webgpu forward: seqIdx must be an i32 tensor of B·T = ${tokens.size} entries, got ${seqIdx.dtype} [${seqIdx.shape.join(",")}]`,
      );
    const out: GpuForwardResult = { readouts: [], logits: [], stepIndex: [] };
    // the CPU model's loop over R (runLoop), on GPU tensors
    runLoop(this, this.embed(tokens), {
      layer: (l, h) => l.forward(h, seqIdx),
      after: keepSteps(this, out, (opts.steps ?? "all") === "all", opts.skipLogits ?? false),
    });
    return out;
  }

  /** Gate logits a [R, B, T] from readouts R × [B, T, D] (ExitGate.logits). */
  gateLogits(readouts: readonly GpuTensor[]): GpuTensor {
    if (!this.gate)
      throw new Error("webgpu: the model has no exit gate (config exit_gate is false)");
    return gateLogits(readouts, this.gate.weight, this.gate.bias);
  }

  /** The trained values back into `model` (same config): for checkpoints and CPU evaluation. */
  copyTo(model: LoopedModel): Promise<void> {
    return this.params.copyTo(model);
  }

  /** Load `model`'s values onto the device (e.g. after restoring a checkpoint on the CPU). */
  copyFrom(model: LoopedModel): void {
    this.params.copyFrom(model);
  }

  /** Release every parameter (and its gradient) on the device. */
  dispose(): void {
    this.params.dispose();
  }
}
